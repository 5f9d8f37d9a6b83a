"""Errors raised when a wire value cannot be turned into a domain value, and the base of the
errors that name the one input a trader has to fix."""


class ParseError(ValueError):
    """A wire value is missing, of the wrong type or malformed; ``field`` names where."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field
        self.problem = problem


class InputError(ValueError):
    """An input the trader has to fix: ``field`` names it, ``message`` says why (a form shows
    the message by that field and keeps what was typed)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
