"""A client connected to a sandbox, for the client tests."""

from __future__ import annotations

from app.api import ClientSettings, RetryPolicy, ServiceClient
from tests.harness import SandboxProcess, Session


async def connect(
    sandbox: SandboxProcess,
    session: Session,
    *,
    retry: RetryPolicy | None = None,
    read_timeout: float = 15.0,
) -> ServiceClient:
    """A ServiceClient logged in as ``session``'s user (the caller closes it)."""
    service = ServiceClient(ClientSettings(sandbox.url, read_timeout=read_timeout), retry=retry)
    try:
        await service.login(session.user, session.password, session.account)
    except BaseException:
        await service.aclose()
        raise
    return service
