"""Where the base URL and the login come from: the option or the environment, else a prompt
when someone is at the terminal. Never from an option: a password on the command line would
end up in shell history and in every process listing.
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from app.api import HashedPassword, Password
from app.cli.errors import UsageError
from app.private import take_password_digest

BASE_URL = "TRADETERM_BASE_URL"
USER = "TRADETERM_USER"
PASSWORD = "TRADETERM_PASSWORD"  # noqa: S105 - the variable's name, not a password
ACCOUNT = "TRADETERM_ACCOUNT"


@dataclass(frozen=True)
class Login:
    user: str
    password: Password = field(repr=False)
    account: str


@dataclass
class Source:
    """The environment and the terminal, injectable for tests."""

    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    interactive: Callable[[], bool] = lambda: sys.stdin.isatty()
    ask: Callable[[str], str] = lambda prompt: _ask(prompt)
    ask_secret: Callable[[str], str] = lambda prompt: getpass.getpass(prompt)

    def value(self, name: str) -> str:
        return self.env.get(name, "").strip()

    def password(self) -> Password:
        """The environment's password, taken: from the process's own environment it is
        hashed and erased as it is read, never a string (``app.private.take_password_digest``,
        which also reads a file descriptor named by ``TRADETERM_PASSWORD_FD``)."""
        if self.env is os.environ:
            digest = take_password_digest()
            return HashedPassword(digest) if digest else ""
        return self.env.get(PASSWORD, "")


def base_url(option: str | None, source: Source) -> str:
    url = (option or "").strip() or source.value(BASE_URL)
    if not url and source.interactive():
        url = source.ask("Service URL (e.g. https://api.example.com): ").strip()
    if not url:
        raise UsageError(
            f"no service URL: pass --base-url or set {BASE_URL} "
            "(e.g. http://127.0.0.1:8000 for the sandbox)"
        )
    return checked_url(url)


def checked_url(url: str) -> str:
    """An http(s) URL with a host and a valid port; anything else is a usage error, not a
    confusing network failure later."""
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"the service URL must start with http:// or https://, got {url!r}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        raise UsageError(f"not a valid service URL: {url!r} ({exc})") from None
    if not parts.hostname or any(c.isspace() for c in url):
        raise UsageError(f"not a valid service URL: {url!r}")
    return url


def login(source: Source) -> Login:
    user, account = source.value(USER), source.value(ACCOUNT)
    password = source.password()
    if user and password and account:
        return Login(user, password, account)
    if not source.interactive():
        missing = [
            name
            for name, value in ((USER, user), (PASSWORD, password), (ACCOUNT, account))
            if not value
        ]
        raise UsageError(f"not logged in: set {', '.join(missing)} (no terminal to ask for them)")
    user = user or source.ask("User: ").strip()
    password = password or source.ask_secret("Password: ")
    account = account or source.ask(f"Account [{user}]: ").strip() or user
    if not (user and password and account):
        raise UsageError("a user, a password and an account are needed to log in")
    return Login(user, password, account)


def _ask(prompt: str) -> str:
    """A question on stderr (stdout stays clean for --json); EOF counts as no answer."""
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line.rstrip("\n")
