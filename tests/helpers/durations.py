"""The call-phase durations of a run, kept in ``tests/durations.json`` so the quality tests can
check that every test measured at a second or more carries the ``slow`` mark: the measurement
is made once and committed, so the check never depends on how busy the machine running it is."""

from __future__ import annotations

import json
from pathlib import Path

#: Set to a file path, a run records each test's call duration (seconds) into it, merged with
#: what the file already holds (so a run of some files refreshes just those).
RECORD_DURATIONS = "TRADETERM_RECORD_DURATIONS"

#: The committed measurements.
DURATIONS_FILE = Path(__file__).resolve().parents[1] / "durations.json"

#: A test measured at this or more belongs in ``-m slow`` (the marker's own definition).
SLOW_SECONDS = 1.0


def read_durations(path: Path = DURATIONS_FILE) -> dict[str, float]:
    """Node id -> seconds of its call phase; empty when nothing was recorded yet."""
    if not path.exists():
        return {}
    loaded = json.loads(path.read_text())
    return {str(node): float(seconds) for node, seconds in loaded.items()}


def write_durations(path: Path, measured: dict[str, float]) -> None:
    """Merge ``measured`` into the file at ``path``: sorted, one test per line, so a refresh
    reads as a small diff."""
    merged = {**read_durations(path), **{node: round(s, 3) for node, s in measured.items()}}
    lines = [f"  {json.dumps(node)}: {merged[node]}" for node in sorted(merged)]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n")
