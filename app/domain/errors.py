"""Errors raised when a wire value cannot be turned into a domain value."""


class ParseError(ValueError):
    """A wire value is missing, of the wrong type or malformed; ``field`` names where."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field
        self.problem = problem
