"""The entry point's command line: the terminal's way to its first price does not
import the sandbox server, whose options are declared only when the sandbox is what runs."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import app.__main__ as entry
args = entry.build_parser(sandbox_options={options}).parse_args({argv})
print(sorted(m for m in ("uvicorn", "starlette", "app.sandbox.server") if m in sys.modules))
print(getattr(args, "port", None))
"""


def probe(argv: list[str], options: bool) -> list[str]:
    """Parse ``argv`` in a fresh interpreter; what it imported and the port it read."""
    code = PROBE.format(options=options, argv=argv)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.splitlines()


def test_the_terminal_command_line_does_not_import_the_sandbox_server() -> None:
    assert probe(["--sandbox", "--smoke-test"], options=False) == ["[]", "None"]


def test_the_sandbox_command_line_declares_its_options() -> None:
    imported, port = probe(["sandbox", "--port", "0"], options=True)
    assert "uvicorn" in imported and port == "0"
