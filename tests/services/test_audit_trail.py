"""The audit trail against the real sandbox: orders sent through the real order desk (one of
them with its answer lost) are listed exactly, newest first, in the trader's words, with intent
and send times, outcomes, server ids and the exact body sent; filters and bounds."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from app.domain import Price, utc_now
from app.domain.display import Precision
from app.services.audit_trail import (
    AuditQuery,
    AuditRow,
    AuditTrail,
    local_ms,
    local_ms_iso,
    utc_ms,
)
from app.services.journal import OrderJournal
from app.services.order_desk import SubmitResult
from app.services.ticket import TicketInput
from tests.harness import SandboxProcess
from tests.helpers.order_desk import Desk, lose_an_order, open_desk

pytestmark = pytest.mark.anyio


@dataclass
class Sent:
    """Three orders sent through the desk: a market fill, a resting limit, a lost answer."""

    desk: Desk
    trail: AuditTrail
    market: SubmitResult
    limit: SubmitResult
    lost: SubmitResult

    @property
    def pairs(self) -> list[str]:
        return list(self.desk.session.pair_info)

    @property
    def precision(self) -> Precision:
        return self.desk.desk.precision

    async def read(self, query: AuditQuery | None = None) -> tuple[AuditRow, ...]:
        page = await self.trail.read(query or AuditQuery(), self.pairs, self.precision)
        return page.rows


@asynccontextmanager
async def three_orders(sandbox: SandboxProcess, tmp_path: Path) -> AsyncIterator[Sent]:
    async with open_desk(sandbox) as d:
        journal = OrderJournal(tmp_path / "journal.db")  # a file: read off the loop's thread
        d.desk.journal = journal
        try:
            market = await d.desk.submit(TicketInput("USD", "BTC", Decimal(100)))
            assert market.status == "filled", market.message
            ask = d.desk.top_of_book["BTC/USD"].ask
            far = Price((ask / 2).quantize(Decimal(1)), "BTC", "USD")
            limit = await d.desk.submit(
                TicketInput(
                    "USD", "BTC", Decimal(1000), "limit", far, utc_now() + timedelta(hours=1)
                )
            )
            assert limit.status == "submitted", limit.message
            await d.faults({"kind": "drop", "path": d.order_path(), "count": 1})
            _, lost = await lose_an_order(d, settle=(600.0,), session=600.0)
            yield Sent(d, AuditTrail(journal), market, limit, lost)
        finally:
            d.desk.close()
            journal.close()


@pytest.mark.slow
async def test_the_trail_lists_exactly_the_orders_sent_with_the_lost_one_unknown(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    async with three_orders(sandbox, tmp_path) as s:
        rows = await s.read()
        posted = [json.loads(body) for body in s.desk.recorder.posted("/order")]
        assert sorted(r.client_order_id for r in rows) == sorted(
            body["clientOrderId"] for body in posted
        )
        assert [r.client_order_id for r in rows] == [
            s.lost.client_order_id,
            s.limit.client_order_id,
            s.market.client_order_id,
        ]  # newest first
        lost, limit, market = rows
        assert [r.status for r in rows] == ["unknown", "submitted", "filled"]
        assert lost.outcome == "unknown — answer lost" and lost.order_id == ""
        assert "unknown whether it executed" in lost.detail
        assert market.what == "Buy BTC for 100 USD (market)"
        assert limit.what.startswith("Buy BTC for 1,000 USD at ≤ ") and "(limit)" in limit.what
        assert s.market.order is not None and market.order_id == s.market.order.order_id
        assert s.limit.order is not None and limit.order_id == s.limit.order.order_id
        for row in rows:
            assert row.sent_at is not None
            assert row.intent_at <= row.sent_at <= row.updated_at
            assert row.kind in ("market", "limit") and row.account == s.desk.account
        sent_bodies = {json.loads(b)["clientOrderId"]: b for b in s.desk.recorder.posted("/order")}
        for row in rows:  # the exact bytes that left
            assert row.body.encode() == sent_bodies[row.client_order_id]
        fields = dict(market.fields())
        assert fields["send time (UTC)"] == utc_ms(market.sent_at)
        assert fields["send time (local)"] == local_ms_iso(market.sent_at)
        assert fields["body sent"] == market.body
        # the same read on the journal's own connection (the in-memory path) agrees
        same = s.trail.read_now(AuditQuery(), s.pairs, s.precision)
        assert same.rows == rows and not same.more


async def test_filters_by_outcome_kind_words_ids_and_intent_time(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    async with three_orders(sandbox, tmp_path) as s:
        lost, limit, market = await s.read()

        async def ids(**query: object) -> list[str]:
            return [r.client_order_id for r in await s.read(AuditQuery(**query))]  # type: ignore[arg-type]

        assert await ids(status="unknown") == [lost.client_order_id]
        assert await ids(kind="limit") == [limit.client_order_id]
        assert await ids(kind="accept") == []
        assert await ids(text=market.order_id) == [market.client_order_id]
        assert await ids(text=lost.client_order_id.upper()) == [lost.client_order_id]
        assert await ids(text="buy 100 usd market") == [
            lost.client_order_id,
            market.client_order_id,
        ]
        assert await ids(text="answer lost") == [lost.client_order_id]
        assert await ids(since=limit.intent_at) == [lost.client_order_id, limit.client_order_id]
        assert await ids(until=limit.intent_at) == [market.client_order_id]
        page = await s.trail.read(AuditQuery(limit=1), s.pairs, s.precision)
        assert [r.client_order_id for r in page.rows] == [lost.client_order_id] and page.more
        with pytest.raises(ValueError, match="before the end"):
            await s.read(AuditQuery(since=limit.intent_at, until=limit.intent_at))
        with pytest.raises(ValueError, match="no such outcome"):
            await s.read(AuditQuery(status="lost"))


@pytest.mark.slow
async def test_an_answer_lost_after_the_server_ran_it_shows_settled(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """The connection cut after the order ran: the desk's look-up finds it, and the trail shows
    it filled with the server's id — one row, as sent."""
    async with open_desk(sandbox) as d:
        journal = OrderJournal(tmp_path / "journal.db")
        d.desk.journal = journal
        try:
            await d.faults({"kind": "drop_after_commit", "path": d.order_path(), "count": 1})
            result = await d.desk.submit(TicketInput("USD", "BTC", Decimal(100)))
            assert result.status == "filled" and result.order is not None
            page = await AuditTrail(journal).read(
                AuditQuery(), d.session.pair_info, d.desk.precision
            )
            [row] = page.rows
            assert (row.client_order_id, row.status) == (result.client_order_id, "filled")
            assert row.order_id == result.order.order_id and row.sent_at is not None
            assert [json.loads(b)["clientOrderId"] for b in d.recorder.posted("/order")] == [
                row.client_order_id
            ]
        finally:
            d.desk.close()
            journal.close()


def test_times_are_milliseconds_in_utc_and_local_time() -> None:
    moment = datetime(2026, 1, 2, 3, 4, 5, 123999, tzinfo=UTC)
    assert utc_ms(moment) == "2026-01-02T03:04:05.123Z"  # truncated, never rounded up
    local = moment.astimezone()
    assert local_ms(moment) == local.strftime("%Y-%m-%d %H:%M:%S.123")
    assert local_ms_iso(moment).startswith(local.strftime("%Y-%m-%dT%H:%M:%S.123"))
    assert datetime.fromisoformat(local_ms_iso(moment)) == moment.replace(microsecond=123000)
    assert utc_ms(None) == local_ms(None) == local_ms_iso(None) == ""
