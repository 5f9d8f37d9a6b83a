"""The order journal: written before sending (exactly the body sent), settled after a crash
against the server by the settling service at the next start."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from app.api import ClientSettings, OutcomeUnknown, ServiceClient, new_client_order_id
from app.domain import Amount
from app.domain.order_request import OrderRequest
from app.services.journal import (
    FIRST_COLUMNS,
    Fact,
    OrderJournal,
    read_facts,
    reading,
    search_entries,
)
from app.services.log_events import LogEvent
from app.services.session import Environment, TerminalSession
from app.services.settling import OrderSettler, Sought, reconcile_on_start
from tests.harness import Faults, Recorder, SandboxProcess, Session

pytestmark = pytest.mark.anyio


async def test_a_crash_between_send_and_answer_is_reconciled_on_restart(
    sandbox: SandboxProcess, client: Session, tmp_path: Path, look_ups: list[str]
) -> None:
    """The app writes the intent, sends, and dies before the answer (simulated by a dropped
    answer after the server committed, and by never recording the outcome). A new journal on
    the same file, at the next start, finds the order on the server with the same look-up the
    order desk uses live."""
    path = tmp_path / "journal.db"
    recorder = Recorder()
    api = ServiceClient(ClientSettings(sandbox.url), transport=recorder)
    await api.login(client.user, client.password, client.account)
    journal = OrderJournal(path)
    sent = OrderRequest("limit", "BTC", "USD", Decimal("0.01"), new_client_order_id())
    never = OrderRequest("limit", "BTC", "USD", Decimal("0.02"), new_client_order_id())
    for request in (sent, never):
        journal.record_intent(
            request.client_order_id, "limit", client.account, request.body_text(client.account)
        )
    Faults(sandbox)(
        {"kind": "drop_after_commit", "path": f"/account/{client.account}/order/limit$", "count": 1}
    )
    with pytest.raises(OutcomeUnknown):  # answer lost; the app "dies" unsettled
        await api.place_order(sent)
    journal.close()
    [wire] = recorder.posted("/order/limit")

    restarted = OrderJournal(path)
    assert {e.client_order_id for e in restarted.unsettled(client.account)} == {
        sent.client_order_id,
        never.client_order_id,
    }
    left = restarted.entry(sent.client_order_id)
    assert left is not None and left.status == "sending"
    assert left.body.encode() == wire  # the journal holds exactly the bytes sent
    changed = await OrderSettler(api).reconcile(restarted, client.account)
    assert look_ups == [sent.client_order_id, never.client_order_id]
    by_id = {entry.client_order_id: entry for entry in changed}
    assert by_id[sent.client_order_id].status == "filled" and by_id[sent.client_order_id].order_id
    # Never seen by the server, but nothing proves it never left: unknown, open for next start.
    assert by_id[never.client_order_id].status == "unknown"
    assert [e.client_order_id for e in restarted.unsettled(client.account)] == [
        never.client_order_id
    ]
    order = await api.order(by_id[sent.client_order_id].order_id)
    assert order.client_order_id == sent.client_order_id
    assert order.size == Amount(Decimal("0.01"), "BTC")
    restarted.close()
    await api.aclose()


@pytest.mark.slow
async def test_reconcile_keeps_entries_it_cannot_check(
    sandbox_factory: Callable[..., SandboxProcess], tmp_path: Path
) -> None:
    own = sandbox_factory()
    user = Session(own.url, "demo", "demo", "demo")
    user.close()
    api = ServiceClient(ClientSettings(own.url))
    await api.login(user.user, user.password, user.account)
    own.stop()  # the service is gone: every look-up is refused
    journal = OrderJournal(tmp_path / "j.db")
    journal.record_intent(
        "x-1", "market", "demo", {"source": "USD", "destination": "BTC", "size": "10"}
    )
    await OrderSettler(api).reconcile(journal, "demo")
    entry = journal.entry("x-1")
    assert entry is not None and entry.status == "unknown"
    assert "cannot reach" in entry.detail
    assert journal.unsettled("demo")[0].client_order_id == "x-1"
    journal.close()
    await api.aclose()


async def test_start_reconciliation_tells_the_trader(
    sandbox: SandboxProcess, client: Session, tmp_path: Path, look_ups: list[str]
) -> None:
    """A journal left with a 'sending' entry whose order the server executed: at start the one
    look-up settles it (filled) and the trader is told."""
    journal = OrderJournal(tmp_path / "start.db")
    placed = OrderRequest("limit", "BTC", "USD", Decimal("0.01"), new_client_order_id())
    body = placed.body_text(client.account)
    journal.record_intent(placed.client_order_id, "limit", client.account, body)
    assert (
        client.post(
            f"/api/v1/routing/account/{client.account}/order/limit", None, content=body.encode()
        ).status_code
        == 200
    )
    api = ServiceClient(ClientSettings(sandbox.url))
    await api.login(client.user, client.password, client.account)
    session = TerminalSession(api, Environment(sandbox.url, client.user, client.account))
    lines: list[LogEvent] = []
    session.events.subscribe(lines.append)
    assert [e.status for e in journal.unsettled(client.account)] == ["sending"]
    account, say = session.environment.account, session.log
    changed = await reconcile_on_start(api, account, journal, say)
    assert look_ups == [placed.client_order_id]
    assert [e.status for e in changed] == ["filled"]
    assert any("filled" in line.message and changed[0].order_id in line.message for line in lines)
    assert await reconcile_on_start(api, account, journal, say) == []  # nothing left open
    journal.close()
    await api.aclose()


def test_the_journal_keeps_the_body_text_verbatim(tmp_path: Path) -> None:
    journal = OrderJournal(tmp_path / "verbatim.db")
    request = OrderRequest("market", "USD", "BTC", Decimal("100.50"), "tt-verbatim")
    text = request.body_text("acct")
    journal.record_intent(request.client_order_id, "market", "acct", text)
    entry = journal.entry("tt-verbatim")
    assert entry is not None and entry.body == text
    assert entry.request == request.body("acct")
    with pytest.raises(json.JSONDecodeError):
        journal.record_intent("tt-bad", "market", "acct", "not json")
    assert journal.entry("tt-bad") is None
    journal.close()


#: The journal as versions before ``sent_at`` wrote it, with one entry.
OLD_SCHEMA = f"""
CREATE TABLE journal ({FIRST_COLUMNS}
);
"""
OLD_SCHEMA += """
INSERT INTO journal (client_order_id, kind, account, request, created_at, status, updated_at)
VALUES ('tt-old', 'market', 'acct', '{"size": "1"}', '2026-01-02T03:04:05.123456Z', 'filled',
        '2026-01-02T03:04:05.623456Z');
"""


def test_a_journal_from_before_send_times_gets_the_column_and_keeps_its_entries(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(OLD_SCHEMA)
    old.close()
    path.chmod(0o600)
    journal = OrderJournal(path)
    entry = journal.entry("tt-old")
    assert entry is not None and entry.status == "filled" and entry.sent_at is None
    journal.record_intent("tt-new", "market", "acct", {"size": "2"})
    journal.record_sent("tt-new")
    new = journal.entry("tt-new")
    assert new is not None and new.sent_at is not None
    journal.close()
    assert OrderJournal(path).entry("tt-new") == new  # opening again migrates nothing twice


def test_an_old_journal_gets_the_facts_table_and_a_fact_is_written_once(tmp_path: Path) -> None:
    """A journal of an earlier version (no send times, no facts) opens, keeps its entries and
    takes facts; the first value written for a subject and name stays, whatever comes later,
    across a close and a reopen, and a read-only reader sees it too."""
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(OLD_SCHEMA)
    old.close()
    path.chmod(0o600)
    journal = OrderJournal(path)
    first = {"mid": Decimal("91000.005"), "at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)}
    assert journal.record_facts([Fact("order-1", "fill_mid", first, "acct")]) == 1
    later = {"mid": Decimal("90000"), "at": datetime(2026, 1, 2, 3, 4, 9, tzinfo=UTC)}
    assert journal.record_facts([Fact("order-1", "fill_mid", later, "acct")]) == 0
    assert journal.record_facts([]) == 0
    stored = {"at": "2026-01-02T03:04:05.000000Z", "mid": "91000.005"}
    assert journal.facts("fill_mid", ["order-1", "order-2"]) == {"order-1": stored}
    assert journal.facts("rfq_markup_buy", ["order-1"]) == {}
    entry = journal.entry("tt-old")
    journal.close()
    again = OrderJournal(path)
    assert again.entry("tt-old") == entry
    assert again.facts("fill_mid", ["order-1"]) == {"order-1": stored}
    again.close()
    with reading(path) as db:
        assert read_facts(db, "fill_mid", ["order-1"]) == {"order-1": stored}


def test_facts_are_read_in_chunks_the_database_accepts(tmp_path: Path) -> None:
    journal = OrderJournal(tmp_path / "journal.db")
    ids = [f"order-{n}" for n in range(2500)]
    assert journal.record_facts(Fact(i, "fill_mid", {"n": i}) for i in ids) == 2500
    found = journal.facts("fill_mid", [*ids, "absent"])
    assert len(found) == 2500 and found["order-2499"] == {"n": "order-2499"}
    journal.close()


def test_send_time_is_stamped_apart_from_the_intent_and_cleared_by_a_resend(
    tmp_path: Path,
) -> None:
    clock = [datetime(2026, 3, 4, 5, 6, 7, 891000, tzinfo=UTC)]
    journal = OrderJournal(tmp_path / "times.db", now=lambda: clock[0])
    journal.record_intent("tt-a", "market", "acct", {"size": "1"})
    before = journal.entry("tt-a")
    assert before is not None and before.sent_at is None  # written, not yet sent
    clock[0] += timedelta(milliseconds=3)
    journal.record_sent("tt-a")
    sent = journal.entry("tt-a")
    assert sent is not None and sent.created_at == before.created_at
    assert sent.sent_at == before.created_at + timedelta(milliseconds=3)
    clock[0] += timedelta(seconds=5)
    journal.record_intent("tt-a", "market", "acct", {"size": "1"})  # the same ticket again
    again = journal.entry("tt-a")
    assert again is not None and again.sent_at is None and again.created_at == sent.created_at
    journal.close()


def test_search_is_newest_first_and_filters_by_status_kind_and_intent_time(
    tmp_path: Path,
) -> None:
    start = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    clock = [start]
    journal = OrderJournal(tmp_path / "search.db", now=lambda: clock[0])
    for number, (kind, status) in enumerate(
        [("market", "filled"), ("limit", "submitted"), ("accept", "unknown"), ("market", "failed")]
    ):
        clock[0] = start + timedelta(seconds=number)
        journal.record_intent(f"tt-{number}", kind, "acct", {"n": number})
        journal.record_outcome(f"tt-{number}", status)
    ids = [e.client_order_id for e in journal.search()]
    assert ids == ["tt-3", "tt-2", "tt-1", "tt-0"]
    assert [e.client_order_id for e in journal.search(kind="market")] == ["tt-3", "tt-0"]
    assert [e.client_order_id for e in journal.search(status="unknown")] == ["tt-2"]
    window = journal.search(since=start + timedelta(seconds=1), until=start + timedelta(seconds=3))
    assert [e.client_order_id for e in window] == ["tt-2", "tt-1"]
    with reading(tmp_path / "search.db") as db:  # its own connection, as a worker thread reads
        assert [e.client_order_id for e in search_entries(db, kind="limit")] == ["tt-1"]
        with pytest.raises(sqlite3.OperationalError):
            db.execute("DELETE FROM journal")  # read-only
    journal.close()


def test_the_send_is_stamped_by_the_servers_clock_too(tmp_path: Path) -> None:
    """The look-up after a crash reads the server-time stamp: this machine's clock may have
    been stepped since."""
    journal = OrderJournal(tmp_path / "journal.db", now=lambda: datetime(2026, 1, 1, tzinfo=UTC))
    journal.record_intent("tt-a", "limit", "acct", {"size": "1"})
    server = datetime(2026, 1, 1, 0, 0, 37, tzinfo=UTC)
    journal.record_sent("tt-a", server)
    entry = journal.entry("tt-a")
    assert entry is not None and entry.sent_server_at == server
    assert Sought.from_entry(entry, timedelta(hours=5)).sent_at == server  # not local + offset
    journal.record_intent("tt-a", "limit", "acct", {"size": "1"})  # sent again: cleared
    again = journal.entry("tt-a")
    assert again is not None and again.sent_server_at is None
    journal.close()
