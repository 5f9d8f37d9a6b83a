"""The mid at fill of each filled order: looked up once in the terminal's stored mids (the chart's
history, ``app.services.mid_history``) and kept, so the blotter computes it once per fill.

Which mid: the stored top of book **nearest in time to the fill** (``executedAt``, else
``updatedAt``), the earlier on a tie, and only within ``MID_TOLERANCE`` (5 s) of it — the pause
at which the chart breaks its lines because the terminal was not watching. The store's times
are this machine's clock when a tick arrived; the fill's is the service's, so the fill's time
is moved by the measured clock offset first. Nothing is invented: with no stored mid that
close (a fill from before the terminal ran, a pair it never polled) the fill gets no mid and
a reason in words.

Once and for all: a fill's answer is settled once no later tick can change it — the clock has
passed the fill by the distance of the sample found (a later sample would be farther) and that
sample's second has ended (the store keeps the last tick of each second); or, with nothing
found, the clock has passed the fill by the tolerance. Until then (a fill of the last few
seconds) it is asked again on every update, and ``unsettled`` says so, so the order list is
published again even when no order changed.

Frozen facts: a settled answer is written to the order journal's facts (``FILL_MID``, keyed by
the order id; ``app.services.journal``) — for every fill the list shows, sent by this terminal
or only seen in the list — and a fill already there is read back, never looked up again. The
mids a store holds change (a restart loses the seconds not yet written, a clock offset is
measured anew, a file is compacted), so a figure looked up twice could differ; one read from
the journal cannot. The same fill therefore shows the same mid and basis points in every
panel, on every refresh and after every restart.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol

from app.domain import format_timestamp, parse_timestamp
from app.domain.fill_economics import FillEconomics, MidSample, Side
from app.domain.order_terms import OrderTerms
from app.domain.records import Order
from app.services.journal import Fact
from app.services.mid_history import MidHistory, nearest, stored_price
from app.services.slices import Steps, run_now

#: Orders walked per step of a publish (about 0.5 ms): the order list's slices, and this
#: look-up's, which runs inside them.
STEP_ORDERS = 500

#: A stored mid counts for a fill only this close to the fill's time (seconds).
MID_TOLERANCE = 5.0
#: Fills younger than this (seconds) are looked up in the store's tail only (about 24 bytes a
#: second: 86 KB for an hour, against 2 MB and 1–4 ms on the GUI thread for the whole day).
RECENT_SECONDS = 3600.0


#: The journal's name for a fill's frozen mid at fill and basis points.
FILL_MID = "fill_mid"


class FactBook(Protocol):
    """Where settled facts are kept (the order journal)."""

    def facts(self, name: str, subjects: Iterable[str]) -> dict[str, dict[str, Any]]: ...

    def record_facts(self, facts: Iterable[Fact]) -> int: ...


def fact_value(economics: FillEconomics) -> dict[str, str | bool | None]:
    """A settled fill's economics as the journal stores them (Decimals and times as text)."""
    sample = economics.sample
    bps = economics.bps

    def text(value: Decimal | datetime | None) -> str | None:
        if value is None:
            return None
        return format_timestamp(value) if isinstance(value, datetime) else format(value, "f")

    return {
        "side": economics.side,
        "rfq": economics.rfq,
        "price": text(economics.price),
        "filled_at": text(economics.filled_at),
        "mid": text(economics.mid),
        "bid": text(None if sample is None else sample.bid),
        "ask": text(None if sample is None else sample.ask),
        "sample_at": text(None if sample is None else sample.at),
        "bps": text(bps),
        "missing": economics.missing,
    }


def from_fact(value: Mapping[str, Any]) -> FillEconomics:
    """The economics ``fact_value`` stored, exactly (settled: ``final``)."""

    def number(key: str) -> Decimal | None:
        raw = value.get(key)
        return None if raw is None else Decimal(raw)

    def moment(key: str) -> datetime | None:
        raw = value.get(key)
        return None if raw is None else parse_timestamp(raw, key)

    bid, ask, at = number("bid"), number("ask"), moment("sample_at")
    sample = None if bid is None or ask is None or at is None else MidSample(at, bid, ask)
    side: Side = "buy" if value.get("side") == "buy" else "sell"
    return FillEconomics(
        side,
        bool(value.get("rfq")),
        number("price"),
        moment("filled_at"),
        sample,
        str(value.get("missing") or ""),
        True,
    )


def filled_at(order: Order) -> datetime | None:
    """When an order filled: ``executedAt``, else (a service that omits it) ``updatedAt``."""
    return order.result.executed_at or order.result.updated_at


class FillMids:
    """``of(orders, pairs)``: the economics of each filled order, by order id.

    ``store`` gives the mid store to read (asked once per update that needs it); ``offset``
    the service's clock minus this machine's; ``now`` this machine's clock (epoch seconds),
    the one the store's samples are stamped with; ``facts`` the journal that keeps each
    settled answer for good (``account``: whose orders these are)."""

    def __init__(
        self,
        store: Callable[[], MidHistory],
        offset: Callable[[], timedelta],
        *,
        now: Callable[[], float] = time.time,
        tolerance: float = MID_TOLERANCE,
        facts: FactBook | None = None,
        account: str = "",
    ) -> None:
        self._store = store
        self._offset = offset
        self._now = now
        self.tolerance = tolerance
        self._facts = facts
        self._account = account
        self._kept: dict[str, FillEconomics] = {}
        self.unsettled = False
        self.look_ups = 0  # fills looked up in the store (once each, and again while unsettled)
        self.restored = 0  # fills whose settled answer was read back from the journal
        self.stored = 0  # settled answers written to the journal

    def of(self, orders: Iterable[Order], pairs: tuple[str, ...]) -> dict[str, FillEconomics]:
        """Each filled order's economics by id (``pairs``: the service's, deciding each
        order's base): kept ones as they are, the others looked up, one read per pair."""
        return run_now(self.of_steps(orders, pairs))

    def of_steps(
        self, orders: Iterable[Order], pairs: tuple[str, ...]
    ) -> Steps[dict[str, FillEconomics]]:
        """``of`` in steps of ``STEP_ORDERS`` orders (the order list publishes in slices):
        kept answers as they are, then the journal's, then the store's for the rest."""
        found: dict[str, FillEconomics] = {}
        fresh: list[Order] = []
        for number, order in enumerate(orders, 1):
            if number % STEP_ORDERS == 0:
                yield
            if order.result.status != "filled":
                continue
            kept = self._kept.get(order.order_id)
            if kept is not None:
                found[order.order_id] = kept
            else:
                fresh.append(order)
        if self._facts is not None and fresh:
            fresh = yield from self._restore(fresh, found)
        measured = yield from self._measure(fresh, pairs)
        found.update(measured)
        settled = [(key, economics) for key, economics in measured.items() if economics.final]
        self.unsettled = len(settled) < len(measured)
        for start in range(0, len(settled), STEP_ORDERS):
            if start:
                yield
            self._settle(settled[start : start + STEP_ORDERS])
        return found

    def _measure(
        self, fresh: list[Order], pairs: tuple[str, ...]
    ) -> Steps[dict[str, FillEconomics]]:
        """Each of ``fresh`` against the stored mids, one read per pair."""
        found: dict[str, FillEconomics] = {}
        wanted: dict[str, list[tuple[Order, OrderTerms, datetime]]] = {}
        for number, order in enumerate(fresh, 1):
            if number % STEP_ORDERS == 0:
                yield
            terms = OrderTerms.of(order, pairs)
            moment = filled_at(order)
            if terms.price is None or moment is None:
                what = "price" if terms.price is None else "time"
                found[order.order_id] = _economics(
                    order, terms, moment, f"the service sent no execution {what}"
                )
                continue
            wanted.setdefault(str(terms.pair_side.pair), []).append((order, terms, moment))
        if wanted:
            store, offset, now = self._store(), self._offset(), self._now()
            for pair, fills in wanted.items():
                found.update(self._look_up(store, pair, fills, offset, now))
        return found

    def _restore(self, fresh: list[Order], found: dict[str, FillEconomics]) -> Steps[list[Order]]:
        """Fills whose settled answer the journal holds take it, as stored (and keep it);
        returns the others."""
        assert self._facts is not None
        left: list[Order] = []
        for start in range(0, len(fresh), STEP_ORDERS):
            if start:
                yield
            chunk = fresh[start : start + STEP_ORDERS]
            stored = self._facts.facts(FILL_MID, [order.order_id for order in chunk])
            for order in chunk:
                value = stored.get(order.order_id)
                if value is None:
                    left.append(order)
                else:
                    found[order.order_id] = self._kept[order.order_id] = from_fact(value)
                    self.restored += 1
        return left

    def _settle(self, settled: list[tuple[str, FillEconomics]]) -> None:
        """Keep settled answers here and, for good, in the journal."""
        for order_id, economics in settled:
            self._kept[order_id] = economics
        if self._facts is not None and settled:
            account = self._account
            self.stored += self._facts.record_facts(
                Fact(order_id, FILL_MID, fact_value(economics), account)
                for order_id, economics in settled
            )

    def _look_up(
        self,
        store: MidHistory,
        pair: str,
        fills: list[tuple[Order, OrderTerms, datetime]],
        offset: timedelta,
        now: float,
    ) -> Iterable[tuple[str, FillEconomics]]:
        moments = [(moment - offset).timestamp() for _, _, moment in fills]
        # Once per pair and update. Fresh fills (the usual case: asked again on each poll until
        # settled) need only the store's last records; a page of old fills reads the day.
        span = now - min(moments) + self.tolerance + 2
        last = math.ceil(span) if span < RECENT_SECONDS else None
        data = store.read(pair, last=last)
        columns = nearest(data, moments, self.tolerance)
        self.look_ups += len(fills)
        # A tail of ``last`` records (at most one a second) reaches back past every fill's
        # tolerance, so a fill before its first sample is before the store's first too.
        first = float(data[0, 0]) if data.shape[1] else None
        found = [column for column in columns if column is not None]
        picked = iter(data[:, found].T.tolist())  # plain floats, one conversion for all
        for (order, terms, moment), local, column in zip(fills, moments, columns, strict=True):
            if column is None:
                final = now >= local + self.tolerance
                reason = _why_none(pair, first, local, self.tolerance, final)
                yield order.order_id, _economics(order, terms, moment, reason, final=final)
                continue
            at, bid, ask = next(picked)
            settled = max(local + abs(at - local), math.floor(at) + 1.0)
            sample = MidSample(
                datetime.fromtimestamp(at, UTC) + offset, stored_price(bid), stored_price(ask)
            )
            economics = _economics(order, terms, moment, sample=sample, final=now >= settled)
            yield order.order_id, economics


def _economics(
    order: Order,
    terms: OrderTerms,
    moment: datetime | None,
    missing: str = "",
    *,
    sample: MidSample | None = None,
    final: bool = True,
) -> FillEconomics:
    return FillEconomics(
        terms.pair_side.side,
        order.type == "rfq",
        terms.price,
        moment,
        sample,
        missing,
        final,
    )


def _why_none(pair: str, first: float | None, local: float, tolerance: float, final: bool) -> str:
    """Why no stored mid of ``pair`` (the first stored at ``first``) is within ``tolerance``
    of a fill at ``local``."""
    seconds = f"{tolerance:g} s"
    if not final:
        return f"no mid of {pair} stored within {seconds} of the fill yet: waiting for the next"
    if first is None:
        return (
            f"this terminal has stored no mid of {pair}: it keeps the mids of the pairs it "
            "watches (one a second, the last 24 h)"
        )
    if local < first:
        return (
            f"the fill is older than the stored mids of {pair}: the terminal was not running, "
            "or not watching the pair, when it filled"
        )
    return (
        f"no mid of {pair} stored within {seconds} of the fill: the terminal was not running, "
        "or not watching the pair, then"
    )
