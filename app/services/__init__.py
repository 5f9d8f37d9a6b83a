"""What the terminal does over time, asyncio only and no Qt (design.md §1): the session and its
feeds, the desks that send orders and accept quotes, the journal and the settling of lost
answers. The widgets reach it through ``app/ui/bridge.py`` alone."""
