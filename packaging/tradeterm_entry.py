"""PyInstaller's entry script for the bundle: the same ``main`` as the ``tradeterm`` command."""

import sys

from app.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
