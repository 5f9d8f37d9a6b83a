"""The embedded sandbox: a local server implementing the whole service interface (the seed) with
a SQLite ledger and simulated prices. It imports only ``app.domain`` of ours (design.md §1)."""
