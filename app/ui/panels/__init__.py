"""The dockable panels of the main window; each takes a ``PanelContext``."""
