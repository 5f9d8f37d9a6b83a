"""Tradeterm: a desktop trading terminal with an embedded sandbox of the trading service."""

import time
from importlib import metadata

#: Monotonic time when the package was first imported: the start of a launch, for timings.
LAUNCHED_AT = time.monotonic()


def version() -> str:
    """The installed distribution's version; "0+unknown" when run from an uninstalled tree."""
    try:
        return metadata.version("tradeterm")
    except metadata.PackageNotFoundError:
        return "0+unknown"
