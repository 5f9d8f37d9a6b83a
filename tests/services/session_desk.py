"""``SessionDesk``: what the service tests' desks share, the client of their session."""

from __future__ import annotations

from app.api import ServiceClient
from app.services.session import TerminalSession


class SessionDesk:
    """A test's desk over a ``session`` (a dataclass field of the subclass): its ``client`` is
    the session's, as the order desk and the record services use it."""

    session: TerminalSession

    @property
    def client(self) -> ServiceClient:
        return self.session.client
