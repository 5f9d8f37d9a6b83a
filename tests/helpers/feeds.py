"""A client logged in to an in-process sandbox, for the feed tests."""

from __future__ import annotations

from app.api import ClientSettings, RetryPolicy, ServiceClient
from tests.harness import AppAccount, AppSandbox


async def logged_in(sandbox: AppSandbox) -> tuple[ServiceClient, AppAccount]:
    """A fresh funded account of ``sandbox`` and a ServiceClient logged in as it."""
    account = await sandbox.new_client()
    client = ServiceClient(
        ClientSettings(sandbox.url), transport=sandbox.transport(), retry=RetryPolicy(attempts=1)
    )
    await client.login(account.user, account.password, account.account)
    return client, account
