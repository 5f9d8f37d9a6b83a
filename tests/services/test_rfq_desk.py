"""The RFQ desk against a real sandbox over loopback: countdown, accept, refusals, requote."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest

from app.api import ServerClock
from app.api.clock import system_now
from app.domain import Amount, parse_timestamp
from app.domain.pair_terms import Trade
from app.domain.records import TopOfBook
from app.domain.valuation import value_in
from app.services.log_events import EventKind
from app.services.pretrade import CheckLimits
from app.services.rfq_desk import (
    SIDES,
    AcceptClosed,
    AcceptResult,
    ChecksBlock,
    LiveQuote,
    QuoteEvent,
    RfqDesk,
    plural,
    quote_checks,
    size_text,
)
from tests.harness import SandboxProcess, until
from tests.helpers.rfq import (
    PAIR,
    Desk,
    accept_posts,
    admin_faults,
    clear_faults,
    logged_requests,
    open_desk,
    start_request_log,
)

pytestmark = pytest.mark.anyio

SIZE = Amount(Decimal("0.01"), "BTC")


async def elapse(seconds: float) -> None:
    """Let ``seconds`` of monotonic time pass (a bounded poll, not a blind sleep)."""
    start = time.monotonic()
    await until(lambda: time.monotonic() - start >= seconds, timeout=seconds + 5)


@pytest.fixture(scope="module")
def rfq_sandbox() -> Iterator[SandboxProcess]:
    """Quotes valid for 3 s, shared by the module's tests (each uses its own account)."""
    process = SandboxProcess("--quote-ttl", "3").start()
    yield process
    process.close()


@pytest.mark.slow
async def test_the_countdown_decreases_with_monotonic_time(rfq_sandbox: SandboxProcess) -> None:
    async with open_desk(rfq_sandbox) as d:
        live = await d.desk.request(PAIR, SIZE)
        first_at = time.monotonic()
        first = {side: live.remaining(side) for side in SIDES}
        assert all(0 < left <= 3.0 for left in first.values())
        await elapse(0.5)
        second_at = time.monotonic()
        for side in SIDES:
            drop = first[side] - live.remaining(side)
            assert drop == pytest.approx(second_at - first_at, abs=0.05)
        # An explicit "now" is used as given: the same moment gives the same answer.
        assert live.remaining("buy", 100.0) == live.deadlines["buy"] - 100.0
        assert live.state("buy", live.deadlines["buy"] + 0.01) == "expired"
        assert live.state("buy", live.deadlines["buy"] - 0.2) == "closing"
        assert live.state("buy", live.deadlines["buy"] - 2.0) == "amber"
        assert live.state("buy", live.deadlines["buy"] - 5.0) == "live"


@pytest.mark.slow
async def test_accept_before_expiry_fills_exactly_the_quoted_amounts(
    rfq_sandbox: SandboxProcess,
) -> None:
    async with open_desk(rfq_sandbox) as d:
        for side in SIDES:
            before = await d.free()
            live = await d.desk.request(PAIR, SIZE)
            quoted = live.quote.side(side)
            result = await d.desk.accept(side)
            assert result.status == "filled", result
            assert result.order is not None and result.order.filled
            assert 0 < result.ms_left <= 3000
            after = await d.free()
            paid, received = quoted.source, quoted.destination
            assert before[paid.asset] - after[paid.asset] == paid.value
            assert after[received.asset] - before[received.asset] == received.value
            if side == "buy":
                assert (paid.asset, received.asset) == ("USD", "BTC")
                assert received.value == SIZE.value
            else:
                assert (paid.asset, received.asset) == ("BTC", "USD")
                assert paid.value == SIZE.value
            entry = d.journal.entry(result.client_order_id)
            assert entry is not None and entry.kind == "accept"
            # the chart's record of the trader's fills has it (keyed as the session keys it)
            key = result.order.client_order_id or result.order.order_id
            assert key in d.desk.session.own_fills
            assert entry.status == "filled" and entry.order_id == live.order_id
            assert entry.request == {"orderId": live.order_id, "side": side}
            # Taken: both sides are closed locally now.
            with pytest.raises(AcceptClosed, match="already accepted"):
                await d.desk.accept("sell" if side == "buy" else "buy")


@pytest.mark.slow
async def test_accept_is_refused_locally_when_closing_and_expired(
    rfq_sandbox: SandboxProcess,
) -> None:
    async with open_desk(rfq_sandbox) as d:
        start_request_log(rfq_sandbox)
        try:
            live = await d.desk.request(PAIR, SIZE)
            await until(lambda: live.state("buy") == "closing", timeout=5)
            assert not live.accept_allowed("buy")
            with pytest.raises(AcceptClosed, match="closes in"):
                await d.desk.accept("buy")
            await until(lambda: live.state("sell") == "expired", timeout=5)
            with pytest.raises(AcceptClosed, match="expired"):
                await d.desk.accept("sell")
            assert accept_posts(rfq_sandbox, d.user.account) == []
            # The log is live: the quote request itself was recorded.
            assert any(r["path"].endswith("/order/rfq") for r in logged_requests(rfq_sandbox))
        finally:
            clear_faults(rfq_sandbox)


@pytest.mark.slow
async def test_a_forced_accept_after_expiry_shows_the_servers_refusal(
    rfq_sandbox: SandboxProcess,
) -> None:
    async with open_desk(rfq_sandbox) as d:
        live = await d.desk.request(PAIR, SIZE)
        await until(lambda: live.state("buy") == "expired", timeout=5)
        before = await d.free()
        result = await d.desk.force_accept("buy")
        assert result.status == "refused" and result.http_status == 410
        expires = live.quote.buy.expires_at
        assert result.message.startswith("Quote expired at ")
        assert result.message.endswith("; request a new quote")
        assert parse_timestamp(result.message.split()[3].rstrip(";")) == expires
        assert result.order is None and result.ms_left < 0
        assert await d.free() == before
        entry = d.journal.entry(result.client_order_id)
        assert entry is not None and entry.status == "rejected" and entry.detail == result.message
        assert entry.sent_at is not None  # it left (checked=False): the server refused it
        assert entry.created_at <= entry.sent_at <= entry.updated_at


@pytest.mark.slow
@pytest.mark.parametrize("skew", [30, -30])
async def test_the_countdown_ignores_a_skewed_local_clock(
    rfq_sandbox: SandboxProcess, skew: int
) -> None:
    clock = ServerClock(now=lambda: system_now() + timedelta(seconds=skew))
    async with open_desk(rfq_sandbox, clock=clock) as d:
        assert d.api.clock.offset.total_seconds() == pytest.approx(-skew, abs=0.2)
        live = await d.desk.request(PAIR, SIZE)
        before = time.monotonic()
        server_now = await d.api.service_time()
        middle = (before + time.monotonic()) / 2
        for side in SIDES:
            truth = (live.quote.side(side).expires_at - server_now).total_seconds()
            assert live.remaining(side, middle) == pytest.approx(truth, abs=0.3)
            assert 2.0 < live.remaining(side, middle) <= 3.0


@pytest.mark.slow
async def test_an_accept_in_flight_disables_both_sides(rfq_sandbox: SandboxProcess) -> None:
    async with open_desk(rfq_sandbox) as d:
        path = f"/account/{d.user.account}/order/rfq/.*/accept$"
        admin_faults(rfq_sandbox, [{"kind": "latency", "path": path, "seconds": 1}])
        try:
            live = await d.desk.request(PAIR, SIZE)
            assert not d.desk.accepting
            task = asyncio.get_running_loop().create_task(d.desk.accept("sell"))
            await until(lambda: d.desk.accepting, timeout=2)
            assert not live.accept_allowed("buy") and not live.accept_allowed("sell")
            with pytest.raises(AcceptClosed, match="in flight"):
                await d.desk.accept("buy")
            with pytest.raises(AcceptClosed, match="in flight"):
                await d.desk.force_accept("buy")
            with pytest.raises(AcceptClosed, match="in flight"):  # no new quote hides it
                await d.desk.request(PAIR, SIZE)
            assert d.desk.current is live
            result = await task
            assert result.status == "filled", result
            assert not d.desk.accepting
            assert len(accept_posts(rfq_sandbox, d.user.account)) == 1
        finally:
            clear_faults(rfq_sandbox)


@pytest.mark.slow
async def test_history_records_requested_accepted_expired_and_refused(
    rfq_sandbox: SandboxProcess,
) -> None:
    async with open_desk(rfq_sandbox) as d:
        published: list[QuoteEvent] = []
        d.desk.history.subscribe(published.append)
        taken = await d.desk.request(PAIR, SIZE)
        await d.desk.accept("buy")
        lapsed = await d.desk.request(PAIR, SIZE)
        await until(lambda: sum(e.kind == "expired" for e in d.desk.events) == 2, timeout=6)
        await d.desk.force_accept("sell")
        kinds = [(e.kind, e.quote_id, e.side) for e in d.desk.events]
        assert kinds[:3] == [
            ("requested", taken.order_id, None),
            ("accepted", taken.order_id, "buy"),
            ("requested", lapsed.order_id, None),
        ]
        assert sorted(kinds[3:5]) == [
            ("expired", lapsed.order_id, "buy"),
            ("expired", lapsed.order_id, "sell"),
        ]
        assert kinds[5] == ("refused", lapsed.order_id, "sell")
        accepted = d.desk.events[1]
        assert accepted.ms_left is not None and 0 < accepted.ms_left <= 3000
        assert d.desk.events[5].message.startswith("Quote expired at ")
        assert all(e.pair == PAIR and e.size == SIZE for e in d.desk.events)
        assert published == d.desk.events
        # The accepted quote does not report expiry later.
        assert not any(e.kind == "expired" and e.quote_id == taken.order_id for e in published)


@pytest.mark.slow
async def test_auto_requote_spaces_requests_and_stops_after_unanswered_quotes(
    sandbox_factory: Callable[..., SandboxProcess],
) -> None:
    short = sandbox_factory("--quote-ttl", "1")
    async with open_desk(short, auto_requote=True, max_unanswered_requotes=2) as d:
        arrivals: list[tuple[float, LiveQuote]] = []
        d.desk.quotes.subscribe(lambda live: arrivals.append((time.monotonic(), live)))
        first = await d.desk.request(PAIR, SIZE)
        await until(lambda: len(arrivals) >= 2, timeout=5)
        assert arrivals[1][1].order_id != first.order_id
        assert d.desk.current is arrivals[1][1]
        await until(lambda: any("auto-requote stopped" in e.message for e in d.logs), timeout=10)
        assert len(arrivals) == 3  # the trader's quote and two requotes, then nothing more
        gaps = [b[0] - a[0] for a, b in itertools.pairwise(arrivals)]
        assert all(gap >= 2.0 - 0.05 for gap in gaps), gaps
        assert d.desk.unanswered_requotes == 2
        stopped_at = len(arrivals)
        await elapse(2.5)
        assert len(arrivals) == stopped_at


@pytest.mark.slow
async def test_an_accept_resets_the_requote_count_and_requote_reuses_pair_and_size(
    rfq_sandbox: SandboxProcess,
) -> None:
    async with open_desk(rfq_sandbox, auto_requote=True, max_unanswered_requotes=1) as d:
        await d.desk.request(PAIR, SIZE)
        d.desk.unanswered_requotes = 1
        await d.desk.accept("sell")
        assert d.desk.unanswered_requotes == 0
        again = await d.desk.requote()
        assert (again.pair, again.size) == (PAIR, SIZE)


@pytest.mark.slow
async def test_markup_in_basis_points_against_the_top_of_book(
    rfq_sandbox: SandboxProcess,
) -> None:
    async with open_desk(rfq_sandbox) as d:
        live = await d.desk.request(PAIR, SIZE)
        buy, sell = live.quote.buy.price.value, live.quote.sell.price.value
        top = TopOfBook(
            live.quote.buy.price.pair,
            bid=sell * Decimal("1.001"),
            bid_size=Decimal(1),
            ask=buy / Decimal("1.0005"),
            ask_size=Decimal(1),
            spread=Decimal(0),
        )
        assert live.markup_bps("buy", top) == pytest.approx(Decimal(5), abs=Decimal("0.01"))
        assert live.markup_bps("sell", top) == pytest.approx(Decimal("9.99"), abs=Decimal("0.01"))
        # The wire may write a side's price the other way round (BASE per QUOTE): the same
        # markup, measured on QUOTE per BASE as the book is.
        sell_side = live.quote.sell
        live.quote = replace(live.quote, sell=replace(sell_side, price=sell_side.price.invert()))
        assert live.quote.sell.price.base == "USD"
        assert live.markup_bps("sell", top) == pytest.approx(Decimal("9.99"), abs=Decimal("0.01"))


@pytest.mark.slow
async def test_the_desk_reads_time_only_from_its_monotonic_clock(
    rfq_sandbox: SandboxProcess,
) -> None:
    fake = [1000.0]
    async with open_desk(rfq_sandbox, clock_monotonic=lambda: fake[0]) as d:
        live = await d.desk.request(PAIR, SIZE)
        assert live.state("buy") in ("live", "amber")
        assert d.desk.current is live and live.accept_allowed("buy")
        fake[0] += 10.0  # no real time passes: the countdown follows the given clock
        assert live.state("buy") == "expired" and live.remaining("buy") < -6.0
        with pytest.raises(AcceptClosed, match="expired"):
            await d.desk.accept("buy")


@pytest.mark.slow
async def test_an_accept_whose_answer_is_lost_is_settled_by_looking_it_up(
    rfq_sandbox: SandboxProcess,
) -> None:
    """The client raises OutcomeUnknown and stops; the desk looks the order up at once (by the
    quote's id) and reports the fill as if the answer had arrived."""
    async with open_desk(rfq_sandbox) as d:
        live = await d.desk.request(PAIR, SIZE)
        path = f"/account/{d.user.account}/order/rfq/.*/accept$"
        admin_faults(rfq_sandbox, [{"kind": "drop_after_commit", "path": path, "count": 1}])
        try:
            result = await d.desk.accept("sell")
        finally:
            lookups = [r["path"] for r in logged_requests(rfq_sandbox) if r["method"] == "GET"]
            clear_faults(rfq_sandbox)
        assert result.status == "filled", result
        assert result.order is not None and result.order.order_id == live.order_id
        assert any(p.endswith(f"/order/{live.order_id}") for p in lookups), lookups
        entry = d.journal.entry(result.client_order_id)
        assert entry is not None and (entry.status, entry.order_id) == ("filled", live.order_id)
        assert [e.kind for e in d.desk.events] == ["requested", "accepted"]
        assert (await d.free())["BTC"] == Decimal("1.99")


async def accept_dropped(d: Desk, sandbox: SandboxProcess) -> AcceptResult:
    """Accept the sell side with the connection cut before the server sees the request."""
    path = f"/account/{d.user.account}/order/rfq/.*/accept$"
    admin_faults(sandbox, [{"kind": "drop", "path": path, "count": 1}])
    try:
        return await d.desk.accept("sell")
    finally:
        clear_faults(sandbox)


@pytest.mark.slow
async def test_an_accept_dropped_before_the_server_saw_it_stays_unknown(
    rfq_sandbox: SandboxProcess,
) -> None:
    async with open_desk(rfq_sandbox) as d:
        await d.desk.request(PAIR, SIZE)
        result = await accept_dropped(d, rfq_sandbox)
        assert result.status == "unknown" and result.order is None
        assert "unknown whether the quote was taken" in result.message
        entry = d.journal.entry(result.client_order_id)
        assert entry is not None and (entry.status, entry.detail) == ("unknown", result.message)
        assert [e.kind for e in d.desk.events] == ["requested", "unknown"]


# -- checks, offline, the trader's words --------------------------------------------


def current(desk: RfqDesk) -> LiveQuote | None:
    """The desk's quote now (a call, so a type checker does not carry it over)."""
    return desk.current


@pytest.mark.slow
async def test_a_request_above_the_size_limit_is_not_sent_unless_overridden(
    rfq_sandbox: SandboxProcess,
) -> None:
    huge = Amount(Decimal(100_000), "BTC")
    async with open_desk(rfq_sandbox, started=True) as d:
        start_request_log(rfq_sandbox)
        try:
            with pytest.raises(ChecksBlock) as blocked:
                await d.desk.request(PAIR, huge)
            reason = blocked.value.reason
            assert reason.startswith("100,000 BTC is worth about "), reason
            assert reason.endswith(" USD, above the 1,000,000.00 USD size limit")
            assert {c.side for c in blocked.value.checks.blocks()} == {"buy", "sell"}
            quote_posts = [
                r for r in logged_requests(rfq_sandbox) if r["path"].endswith("/order/rfq")
            ]
            assert quote_posts == [] and d.desk.events == [] and current(d.desk) is None
            live = await d.desk.request(PAIR, huge, override=True)
            assert live.override and current(d.desk) is live
            # A requote asks with the same override.
            again = await d.desk.requote()
            assert again.override and again.size == huge
        finally:
            clear_faults(rfq_sandbox)


@pytest.mark.slow
async def test_limits_in_a_quote_currency_size_value_the_estimated_spend(
    rfq_sandbox: SandboxProcess,
) -> None:
    """A size in USD is valued as it is on the buy side and through the bid on the sell side."""
    async with open_desk(rfq_sandbox, started=True) as d:
        d.desk.limits = CheckLimits(max_notional=Decimal(5000))
        with pytest.raises(
            ChecksBlock, match=r"^10,000 USD is above the 5,000\.00 USD size limit$"
        ):
            await d.desk.request(PAIR, Amount(Decimal(10_000), "USD"))
        live = await d.desk.request(PAIR, Amount(Decimal(1_000), "USD"))
        assert live.quote.buy.source == Amount(Decimal(1000), "USD")


@pytest.mark.slow
async def test_an_accept_a_check_blocks_is_refused_locally_per_side(
    rfq_sandbox: SandboxProcess,
) -> None:
    """The buy side is valued by the USD it spends, the sell side by the BTC it spends: a
    limit between the two blocks only the buy side; nothing is sent for a blocked side."""
    async with open_desk(rfq_sandbox, started=True) as d:
        start_request_log(rfq_sandbox)
        try:
            live = await d.desk.request(PAIR, SIZE)
            market = d.desk.market  # one snapshot: the book cannot move under the test
            buy_worth = live.quote.buy.source.value
            sell_worth = value_in(SIZE.value, "BTC", "USD", market.top_of_book)
            assert sell_worth is not None and sell_worth < buy_worth
            limits = CheckLimits(max_notional=(buy_worth + sell_worth) / 2)
            found = quote_checks(live, replace(market, limits=limits), precision=d.desk.precision)
            assert found.reason("sell") is None
            reason = found.reason("buy") or ""
            assert reason.startswith(f"Buy BTC is worth about {buy_worth:,.2f} USD, above the ")
            assert reason.endswith(" USD size limit")
            # The desk applies its limits before sending.
            d.desk.limits = CheckLimits(max_notional=Decimal(1))
            for side in SIDES:
                with pytest.raises(ChecksBlock, match="size limit"):
                    await d.desk.accept(side)
            assert accept_posts(rfq_sandbox, d.user.account) == []
            result = await d.desk.accept("sell", override=True)
            assert result.status == "filled", result
            assert len(accept_posts(rfq_sandbox, d.user.account)) == 1
        finally:
            clear_faults(rfq_sandbox)


@pytest.mark.slow
async def test_offline_the_desk_sends_neither_requests_nor_accepts(
    rfq_sandbox: SandboxProcess,
) -> None:
    async with open_desk(rfq_sandbox, started=True) as d:
        await d.desk.request(PAIR, SIZE)
        admin_faults(
            rfq_sandbox, [{"kind": "status", "status": 503, "path": ".*", "method": "GET"}]
        )
        try:
            await until(lambda: d.desk.market.offline, timeout=10)
            with pytest.raises(
                AcceptClosed, match=r"^the connection is offline .* resumes? when it is back$"
            ):
                await d.desk.accept("buy")
            with pytest.raises(
                AcceptClosed, match=r"^the connection is offline .* resumes? when it is back$"
            ):
                await d.desk.request(PAIR, SIZE)
            assert accept_posts(rfq_sandbox, d.user.account) == []
            assert [e.kind for e in d.desk.events] == ["requested"]
        finally:
            clear_faults(rfq_sandbox)


@pytest.mark.slow
async def test_the_fill_log_line_is_the_trade_sentence(rfq_sandbox: SandboxProcess) -> None:
    async with open_desk(rfq_sandbox) as d:
        live = await d.desk.request(PAIR, SIZE)
        result = await d.desk.accept("buy")
        assert result.status == "filled" and result.order is not None
        trade = Trade.of(result.order, [PAIR])
        assert trade is not None
        fills = [e.message for e in d.logs if e.kind == EventKind.FILL]
        sentence = trade.sentence(d.desk.precision)
        assert sentence.startswith("Bought 0.01000000 BTC at ") and "(spent " in sentence
        assert fills == [f"{sentence} — RFQ order {live.order_id}, {result.ms_left:,} ms left"]
        accepted = d.desk.events[-1]
        assert accepted.base == SIZE.value
        assert accepted.prices == {"buy": live.quote.buy.price.value}


def test_counts_and_sizes_read_well() -> None:
    assert plural(1, "quote") == "1 quote" and plural(10, "quote") == "10 quotes"
    assert plural(1200, "quote") == "1,200 quotes"
    assert size_text(Amount(Decimal(100_000), "BTC")) == "100,000 BTC"
    assert size_text(Amount(Decimal("0.01"), "BTC")) == "0.01 BTC"
    assert size_text(Amount(Decimal("1234.5"), "USD")) == "1,234.5 USD"


# -- time discipline and accepts under faults ------------------------------------------------


@pytest.fixture(scope="module")
def ten_second_sandbox() -> Iterator[SandboxProcess]:
    """Quotes valid for 10 s."""
    process = SandboxProcess("--quote-ttl", "10").start()
    yield process
    process.close()


@pytest.mark.slow
@pytest.mark.parametrize("jump", [600, -600])
async def test_a_wall_clock_jump_keeps_the_countdown_on_server_time(
    ten_second_sandbox: SandboxProcess, jump: int
) -> None:
    """The local wall clock jumps ±600 s after start: the quote on screen keeps counting down
    from its 10 s, the jump is detected and the offset re-measured before the next quote's
    countdown, and after expiry nothing may be accepted."""
    wall_shift = [0.0]
    ahead = [0.0]  # the desk's monotonic clock, moved forward by hand (no waiting)
    clock = ServerClock(now=lambda: system_now() + timedelta(seconds=wall_shift[0]))
    desk_clock = lambda: time.monotonic() + ahead[0]  # noqa: E731
    async with open_desk(ten_second_sandbox, clock=clock, clock_monotonic=desk_clock) as d:
        assert d.api.clock.offset.total_seconds() == pytest.approx(0, abs=0.2)
        live = await d.desk.request(PAIR, SIZE)
        before = live.remaining("buy")
        assert 9.0 < before < 10.2  # 10 s, less the time since; the estimate is ±ms
        wall_shift[0] = jump
        checked_at = time.monotonic()
        assert live.remaining("buy") == pytest.approx(before, abs=0.2)  # does not move
        assert d.api.clock.server_now() - system_now() < timedelta(seconds=0.2)
        fresh = await d.desk.request(PAIR, SIZE)  # re-measures before its countdown
        assert d.api.clock.jumps == 1
        assert d.api.clock.offset.total_seconds() == pytest.approx(-jump, abs=0.2)
        assert live.remaining("buy") == pytest.approx(
            before - (time.monotonic() - checked_at), abs=0.2
        )
        for side in SIDES:
            assert 9.0 < fresh.remaining(side) < 10.2
            assert fresh.accept_allowed(side)
        ahead[0] = 10.5
        for side in SIDES:
            assert fresh.state(side) == "expired" and not fresh.accept_allowed(side)
        with pytest.raises(AcceptClosed, match="expired"):
            await d.desk.accept("buy")


@pytest.mark.slow
async def test_a_relogin_between_check_and_send_does_not_send_a_late_accept(
    rfq_sandbox: SandboxProcess,
) -> None:
    """The accept leaves with time to spare, is answered 401, and the re-login takes long
    enough that the quote has less than the margin left: the resend is refused locally, with
    the time that was left, and only the first POST reached the service."""
    async with open_desk(rfq_sandbox) as d:
        live = await d.desk.request(PAIR, SIZE)
        path = f"/account/{d.user.account}/order/rfq/.*/accept$"
        admin_faults(
            rfq_sandbox,
            [
                {"kind": "unauthorized", "path": path, "count": 1},
                {"kind": "latency", "path": "/identity/jwt$", "seconds": 1.4, "count": 1},
            ],
        )
        try:
            await until(lambda: live.remaining("buy") < 1.6, timeout=5)
            assert live.accept_allowed("buy")
            logins = d.api.logins
            with pytest.raises(AcceptClosed) as refused:
                await d.desk.accept("buy")
            posts = accept_posts(rfq_sandbox, d.user.account)
        finally:
            clear_faults(rfq_sandbox)
        assert d.api.logins == logins + 1
        assert len(posts) == 1, posts  # the one answered 401; the resend never left
        reason = refused.value.reason
        assert reason.startswith("the quote had ") and reason.endswith(" s margin"), reason
        left = float(reason.split()[3])
        assert 0.0 <= left < live.accept_margin
        assert live.accepted_side is None and live.in_flight is None
        assert d.journal.unsettled(d.user.account) == []  # the intent is closed as not sent


@pytest.mark.slow
async def test_an_unknown_accept_is_settled_during_the_session(
    rfq_sandbox: SandboxProcess,
) -> None:
    """The accept commits but its answer is cut and the look-up made at once fails: the
    outcome is unknown (the other side says so, not "already accepted"), and the desk's own
    look-ups find the fill a moment later."""
    async with open_desk(rfq_sandbox, settle_delays=(0.2,) * 25) as d:
        live = await d.desk.request(PAIR, SIZE)
        accept_path = f"/account/{d.user.account}/order/rfq/.*/accept$"
        lookup_path = f"/order/account/{d.user.account}/order/{live.order_id}$"
        admin_faults(
            rfq_sandbox,
            [
                {"kind": "drop_after_commit", "path": accept_path, "count": 1},
                {"kind": "status", "status": 503, "path": lookup_path, "count": 1},
            ],
        )
        try:
            result = await d.desk.accept("sell")
            assert result.status == "unknown", result
            assert live.outcome_unknown
            other = live.closed_reason("buy")
            assert other is not None and other.startswith("the other side's outcome is unknown")
            assert "already accepted" not in other
            entry = d.journal.entry(result.client_order_id)
            assert entry is not None and entry.status == "unknown"
            await until(lambda: [e.kind for e in d.desk.events][-1] == "accepted", timeout=10)
        finally:
            clear_faults(rfq_sandbox)
        entry = d.journal.entry(result.client_order_id)
        assert entry is not None and (entry.status, entry.order_id) == ("filled", live.order_id)
        assert (live.outcome_unknown, live.accepted_side) == (False, "sell")
        assert live.closed_reason("buy") == "this quote was already accepted (sell)"
        assert [e.kind for e in d.desk.events] == ["requested", "unknown", "accepted"]
        assert any(e.kind == EventKind.FILL and "settled" in e.message for e in d.logs)
        assert (await d.free())["BTC"] == Decimal("1.99")


@pytest.mark.slow
async def test_an_accept_never_seen_stays_unknown_after_its_quote_expired(
    rfq_sandbox: SandboxProcess,
) -> None:
    """Dropped before the server saw it: the look-ups find nothing; once the quote is past
    its expiry by the grace period they stop, and the accept stays unknown, saying so."""
    async with open_desk(rfq_sandbox, settle_delays=(0.2,) * 50, absent_grace=0.0) as d:
        live = await d.desk.request(PAIR, SIZE)
        result = await accept_dropped(d, rfq_sandbox)
        assert result.status == "unknown"

        def detail() -> str:
            entry = d.journal.entry(result.client_order_id)
            return "" if entry is None else entry.detail

        await until(lambda: "after the quote expired" in detail(), timeout=10)
        entry = d.journal.entry(result.client_order_id)
        assert entry is not None and entry.status == "unknown"
        assert "absence is not proof" in entry.detail
        assert live.outcome_unknown and live.state("sell") == "expired"
        assert [e.kind for e in d.desk.events] == ["requested", "unknown"]
