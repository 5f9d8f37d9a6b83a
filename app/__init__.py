"""Tradeterm: a desktop trading terminal with an embedded sandbox of the trading service."""

from importlib import metadata


def version() -> str:
    """The installed distribution's version; "0+unknown" when run from an uninstalled tree."""
    try:
        return metadata.version("tradeterm")
    except metadata.PackageNotFoundError:
        return "0+unknown"
