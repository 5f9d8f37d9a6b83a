"""The mid at fill of each filled order, from a real mid store (the chart's history files) on a
clock the test moves: the nearest stored sample within the tolerance, looked up once and kept
once nothing later can change it; the clock offset applied; "no mid" with the reason, never a
number made up."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any

import pytest

from app.domain import format_timestamp
from app.domain.money import MONEY_CONTEXT
from app.domain.records import Order
from app.services.fill_mids import FILL_MID, MID_TOLERANCE, FillMids, fact_value, from_fact
from app.services.journal import OrderJournal
from app.services.mid_history import MidHistory, stored_price

D = Decimal
PAIRS = ("BTC/USD", "ETH/USD")
#: The fills' time, as epoch seconds and on the wire.
T = 1_795_000_000.25
STAMP = datetime.fromtimestamp(T, UTC)


def fill(
    order_id: str,
    side: str,
    price: str,
    at: datetime = STAMP,
    *,
    kind: str = "limit",
    status: str = "filled",
    base: str = "BTC",
) -> Order:
    """A filled order as the service sends it: a Buy pays USD for ``base``, a Sell the other way;
    ``price`` in USD per ``base`` (the wire's invertedPrice for a Buy, its price for a Sell), and
    the average fill price too: 0.01 of the base traded for ``price`` × 0.01 USD."""
    source, destination = ("USD", base) if side == "buy" else (base, "USD")
    notional = format(D(price) * D("0.01"), "f") if D(price) else "1000"
    result: dict[str, Any] = {"status": status}
    if status == "filled":
        result |= {
            "price": f"0.00001 {source}/{destination}" if side == "buy" else f"{price} {base}/USD",
            "invertedPrice": f"{price} {base}/USD" if side == "buy" else f"0.00001 USD/{base}",
            "total": f"0.01 {destination}" if side == "buy" else f"{notional} USD",
            "executedAt": format_timestamp(at),
        }
    raw = {
        "orderId": order_id,
        "size": f"{notional} {source}" if side == "buy" else f"0.01 {source}",
        "source": source,
        "destination": destination,
        "type": kind,
        "submittedAt": format_timestamp(at),
        "result": result,
    }
    return Order.parse(raw, "order")


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MidHistory]:
    history = MidHistory(tmp_path / "chart-history" / "sandbox")
    yield history
    history.close()


def bps(cost: str, mid: str) -> Decimal:
    """Basis points of ``cost`` on ``mid``, exactly as the blotter computes them (50 digits)."""
    with localcontext(MONEY_CONTEXT):
        return D(cost) * 10_000 / D(mid)


def mids(store: MidHistory, clock: Clock, offset: timedelta = timedelta(0)) -> FillMids:
    return FillMids(lambda: store, lambda: offset, now=clock)


def test_the_nearest_stored_mid_is_kept_once_nothing_nearer_can_come(store: MidHistory) -> None:
    store.record("BTC/USD", T - 2.6, 90000.0, 90010.0)
    store.record("BTC/USD", T - 0.7, 90001.0, 90011.0)  # 0.7 s before the fill
    store.record("BTC/USD", T + 0.8, 90002.0, 90012.0)  # 0.8 s after: farther
    store.flush(everything=True)
    clock = Clock(T + 0.9)
    book = mids(store, clock)
    buy, sell, resting = (
        fill("b", "buy", "90011.00"),
        fill("s", "sell", "90001.00"),
        fill("r", "buy", "0", status="submitted"),
    )
    found = book.of([buy, sell, resting], PAIRS)
    assert set(found) == {"b", "s"}  # a resting order has no fill to measure
    bought, sold = found["b"], found["s"]
    assert bought.mid == sold.mid == D("90006")
    assert bought.sample is not None and bought.sample.bid == D("90001")
    assert bought.sample_offset == pytest.approx(-0.7)
    assert (bought.side, bought.price, bought.bps) == ("buy", D("90011.00"), bps("5", "90006"))
    assert (sold.side, sold.bps) == ("sell", bps("5", "90006"))  # + a cost, both sides
    assert bought.final and not book.unsettled
    assert book.look_ups == 2
    # Kept: asked again, nothing is looked up and the same answer comes back.
    assert book.of([buy, sell], PAIRS) == {"b": bought, "s": sold}
    assert book.look_ups == 2


def test_a_fresh_fill_is_asked_again_until_its_mid_is_settled(store: MidHistory) -> None:
    store.record("BTC/USD", T - 0.9, 100.0, 102.0)
    clock = Clock(T + 0.1)  # the fill is a tenth of a second old: a nearer tick may come
    book = mids(store, clock)
    first = book.of([fill("b", "buy", "101.5")], PAIRS)["b"]
    assert first.mid == D(101) and not first.final and book.unsettled
    store.record("BTC/USD", T + 0.3, 100.5, 102.5)  # nearer than the one before
    clock.now = T + 1.4  # its second has ended, and anything later would be farther
    settled = book.of([fill("b", "buy", "101.5")], PAIRS)["b"]
    assert settled.mid == D("101.5") and settled.bps == 0 and settled.final
    assert (book.unsettled, book.look_ups) == (False, 2)


def test_the_service_clock_offset_moves_the_fill_onto_this_machines_clock(
    store: MidHistory,
) -> None:
    """The store's times are this machine's; the service's clock runs 3 s ahead of it."""
    store.record("BTC/USD", T - 3.0, 100.0, 102.0)  # the fill's moment on this machine
    store.record("BTC/USD", T, 200.0, 202.0)
    book = mids(store, Clock(T + 30), offset=timedelta(seconds=3))
    found = book.of([fill("b", "buy", "101")], PAIRS)["b"]
    assert found.mid == D(101) and found.sample is not None
    assert found.sample.at == STAMP  # reported in the service's time, like the fill


def test_no_mid_is_made_up_and_the_reason_is_given(store: MidHistory) -> None:
    store.record("BTC/USD", T + 100.0, 100.0, 102.0)
    store.record("BTC/USD", T + 200.0, 100.0, 102.0)
    book = mids(store, Clock(T + 1000))
    found = book.of(
        [
            fill("old", "buy", "101"),  # before the first stored mid: the terminal was not there
            fill("gap", "sell", "101", STAMP + timedelta(seconds=150)),
            fill("eth", "buy", "3100", base="ETH"),  # a pair never stored
            fill("edge", "buy", "101", STAMP + timedelta(seconds=100 - MID_TOLERANCE)),
        ],
        PAIRS,
    )
    assert found["edge"].mid == D(101)  # exactly the tolerance away still counts
    for order_id, words in (
        ("old", "older than the stored mids of BTC/USD"),
        ("gap", "no mid of BTC/USD stored within 5 s of the fill: the terminal was not"),
        ("eth", "this terminal has stored no mid of ETH/USD"),
    ):
        economics = found[order_id]
        assert (economics.mid, economics.bps, economics.final) == (None, None, True), order_id
        assert words in economics.missing, (order_id, economics.missing)


def test_a_fill_of_this_second_without_a_mid_yet_waits(store: MidHistory) -> None:
    clock = Clock(T + 0.2)
    book = mids(store, clock)
    waiting = book.of([fill("b", "buy", "101", kind="rfq")], PAIRS)["b"]
    assert waiting.mid is None and not waiting.final and book.unsettled
    assert "waiting" in waiting.missing and waiting.kind == "markup"
    store.record("BTC/USD", T + 0.5, 100.0, 102.0)
    clock.now = T + 1.1
    found = book.of([fill("b", "buy", "101.01", kind="rfq")], PAIRS)["b"]
    assert found.mid == D(101) and found.final and found.rfq
    assert found.bps == bps("0.01", "101")


def test_a_fresh_fill_reads_the_stores_tail_only(store: MidHistory) -> None:
    """A day of mids on disk: a fill of the last seconds is looked up in the file's last
    records (a few kilobytes, on the GUI thread), with the same answer as from the whole day."""
    for second in range(3000):
        store.record("BTC/USD", T - 3000 + second + 0.5, 100.0 + second % 7, 102.0)
    done = store.flush(everything=True)
    assert done is not None
    done.result()
    whole = store.read("BTC/USD")
    assert whole.shape[1] == 3000
    assert (store.read("BTC/USD", last=10) == whole[:, -10:]).all()
    fresh = mids(store, Clock(T + 1.0)).of([fill("b", "buy", "101")], PAIRS)["b"]
    nearest_mid = (stored_price(float(whole[1, -1])) + stored_price(float(whole[2, -1]))) / 2
    assert fresh.mid == nearest_mid and fresh.final
    # A fill 30 s after the last stored mid, read from the tail: the reason is the gap.
    late = mids(store, Clock(T + 60.0)).of(
        [fill("l", "buy", "101", STAMP + timedelta(seconds=30))], PAIRS
    )["l"]
    assert late.mid is None
    assert "no mid of BTC/USD stored within 5 s of the fill" in late.missing


# -- frozen in the journal -------------------------------------------------------------------------


def test_a_settled_mid_is_frozen_in_the_journal_and_read_back_after_a_restart(
    store: MidHistory, tmp_path: Path
) -> None:
    """The first terminal settles the fill against the mids it stored and writes the answer to
    the journal; after a restart the store holds other mids near the fill (a lost second, a new
    clock offset) — the answer is read back from the journal as it was, not looked up again."""
    path = tmp_path / "journal.db"
    store.record("BTC/USD", T - 0.4, 90001.0, 90011.0)
    store.record("BTC/USD", T + 3.0, 95000.0, 95010.0)
    journal = OrderJournal(path)
    book = FillMids(lambda: store, lambda: timedelta(0), now=Clock(T + 10), facts=journal)
    buy, resting = fill("b", "buy", "90011.00"), fill("r", "buy", "0", status="submitted")
    first = book.of([buy, resting], PAIRS)["b"]
    assert first.final and first.mid == D("90006") and (book.look_ups, book.stored) == (1, 1)
    journal.close()

    other = MidHistory(tmp_path / "chart-history" / "other")  # what the next run finds
    other.record("BTC/USD", T + 0.1, 80000.0, 80010.0)
    reopened = OrderJournal(path)
    offset = timedelta(seconds=2)  # the clock offset measured anew
    again = FillMids(lambda: other, lambda: offset, now=Clock(T + 99), facts=reopened)
    restored = again.of([buy], PAIRS)["b"]
    assert restored == first and restored.bps == first.bps == bps("5", "90006")
    assert restored.sample == first.sample and restored.final
    assert (again.look_ups, again.restored, again.stored) == (0, 1, 0)
    # Without the journal the same fill would read another mid: the journal is what holds it.
    assert FillMids(lambda: other, lambda: offset, now=Clock(T + 99)).of([buy], PAIRS)[
        "b"
    ].mid == D("80005")
    other.close()
    reopened.close()


def test_a_fill_still_settling_is_not_frozen_and_one_without_a_mid_is(
    store: MidHistory, tmp_path: Path
) -> None:
    journal = OrderJournal(tmp_path / "journal.db")
    clock = Clock(T + 0.2)
    book = FillMids(lambda: store, lambda: timedelta(0), now=clock, facts=journal)
    assert not book.of([fill("b", "buy", "101")], PAIRS)["b"].final
    assert journal.facts(FILL_MID, ["b"]) == {}  # nothing shown as settled, nothing stored
    clock.now = T + MID_TOLERANCE + 1  # no mid came: "none" is the settled answer
    settled = book.of([fill("b", "buy", "101")], PAIRS)["b"]
    assert settled.final and settled.mid is None and "no mid of BTC/USD" in settled.missing
    stored = journal.facts(FILL_MID, ["b"])["b"]
    assert stored["mid"] is None and stored["missing"] == settled.missing
    journal.close()


def test_the_sign_follows_the_side_a_buy_above_the_mid_is_a_cost(store: MidHistory) -> None:
    """A market buy pays the ask, above the mid: a cost, never "better than mid"; a sell
    receives the bid, below it: a cost too. Frozen or not, the sign is the trade's."""
    store.record("BTC/USD", T, 90990.0, 91010.0)  # mid 91,000
    book = mids(store, Clock(T + 10))
    found = book.of(
        [fill("b", "buy", "91010.00", kind="market"), fill("s", "sell", "90990.00")], PAIRS
    )
    bought, sold = found["b"], found["s"]
    assert bought.price is not None and bought.mid is not None and bought.price > bought.mid
    assert bought.bps is not None and bought.bps > 0 and bought.bps == bps("10", "91000")
    assert sold.bps is not None and sold.bps > 0 and sold.bps == bought.bps
    restored = from_fact(fact_value(bought))
    assert restored == bought and restored.bps == bought.bps
