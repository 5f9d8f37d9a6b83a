"""Plain helpers the tests share (builders, waits, small records): imported by test modules and
conftest files alike, so no test module imports another or a conftest."""
