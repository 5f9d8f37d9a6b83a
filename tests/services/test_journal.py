"""The order journal: written before sending, settled after a crash against the server."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from app.api import ClientSettings, NetworkError, ServiceClient, new_client_order_id
from app.domain import Amount
from app.services.journal import OrderJournal, reconcile_on_start, server_lookup
from app.services.log_events import LogEvent
from app.services.session import Environment, TerminalSession
from tests.harness import SandboxProcess, Session

pytestmark = pytest.mark.anyio


async def test_a_crash_between_send_and_answer_is_reconciled_on_restart(
    sandbox: SandboxProcess, client: Session, tmp_path: Path
) -> None:
    """The app writes the intent, sends, and dies before the answer (simulated by a dropped
    answer after the server committed, and by never recording the outcome). A new journal on
    the same file, at the next start, finds the order on the server."""
    path = tmp_path / "journal.db"
    api = ServiceClient(ClientSettings(sandbox.url))
    await api.login(client.user, client.password, client.account)
    journal = OrderJournal(path)
    sent = new_client_order_id()
    never = new_client_order_id()
    journal.record_intent(
        sent,
        "limit",
        client.account,
        {"source": "BTC", "destination": "USD", "size": Decimal("0.01")},
    )
    journal.record_intent(
        never,
        "limit",
        client.account,
        {"source": "BTC", "destination": "USD", "size": Decimal("0.02")},
    )
    with sandbox.admin() as admin:
        admin.post(
            "/api/v1/sandbox/admin/faults",
            json={
                "faults": [
                    {
                        "kind": "drop_after_commit",
                        "path": f"/account/{client.account}/order/limit$",
                        "count": 1,
                    }
                ]
            },
        ).raise_for_status()
    with pytest.raises(httpx.RemoteProtocolError):  # answer lost; the app "dies" unsettled
        client.limit_order("BTC", "USD", "0.01", clientOrderId=sent)
    journal.close()

    restarted = OrderJournal(path)
    assert {e.client_order_id for e in restarted.unsettled(client.account)} == {sent, never}
    changed = await restarted.reconcile(client.account, server_lookup(api))
    by_id = {entry.client_order_id: entry for entry in changed}
    assert by_id[sent].status == "filled" and by_id[sent].order_id
    assert by_id[never].status == "failed"
    assert restarted.unsettled(client.account) == []
    order = await api.order(by_id[sent].order_id)
    assert order.client_order_id == sent and order.size == Amount(Decimal("0.01"), "BTC")
    restarted.close()
    await api.aclose()


async def test_reconcile_keeps_entries_it_cannot_check(tmp_path: Path) -> None:
    journal = OrderJournal(tmp_path / "j.db")
    journal.record_intent(
        "x-1", "market", "acct", {"source": "USD", "destination": "BTC", "size": "10"}
    )

    async def unreachable(_: object) -> None:
        raise NetworkError("cannot reach the service")

    await journal.reconcile("acct", unreachable)
    entry = journal.entry("x-1")
    assert entry is not None and entry.status == "unknown"
    assert "cannot reach" in entry.detail
    assert journal.unsettled("acct")[0].client_order_id == "x-1"
    journal.close()


async def test_start_reconciliation_tells_the_trader(
    sandbox: SandboxProcess, client: Session, tmp_path: Path
) -> None:
    journal = OrderJournal(tmp_path / "start.db")
    placed = new_client_order_id()
    journal.record_intent(
        placed,
        "limit",
        client.account,
        {"source": "BTC", "destination": "USD", "size": Decimal("0.01")},
    )
    assert client.limit_order("BTC", "USD", "0.01", clientOrderId=placed).status_code == 200
    api = ServiceClient(ClientSettings(sandbox.url))
    await api.login(client.user, client.password, client.account)
    session = TerminalSession(api, Environment(sandbox.url, client.user, client.account))
    lines: list[LogEvent] = []
    session.events.subscribe(lines.append)
    changed = await reconcile_on_start(session, journal)
    assert [e.status for e in changed] == ["filled"]
    assert any("filled" in line.message and changed[0].order_id in line.message for line in lines)
    assert await reconcile_on_start(session, journal) == []  # nothing left open
    journal.close()
    await api.aclose()
