"""A bench's command line, declared by its defaults."""

from __future__ import annotations

import argparse


def bench_parser(doc: str | None, **defaults: int | float) -> argparse.ArgumentParser:
    """One ``--name`` option per default (``beat_ms`` as ``--beat-ms``), of its default's type;
    the bench adds any other option before it parses."""
    parser = argparse.ArgumentParser(description=doc)
    for name, default in defaults.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)
    return parser
