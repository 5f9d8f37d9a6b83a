"""Orders and accepts whose outcome is not known: the list the blotter shows, in the trader's
words, until the server shows each one or the trader, told the facts, dismisses it (design.md
§7).

The list is the journal's ``unknown`` entries of the session's account, read again after every
result of the desks (``refresh``). The live desks keep looking for what they lose themselves;
what an earlier run left unknown (the start-up reconcile could not find it) is looked for here,
after 1, 2, 4 … seconds and then every ``SESSION_DELAY_SECONDS`` for the whole session
(``follow``). Dismissing only stops the
looking: it cancels nothing on the server (the service has no cancel), and the journal keeps the
entry as ``dismissed`` with what was known, so the next start does not look again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation

from app.domain import Price
from app.domain.display import Precision
from app.services.events import Topic
from app.services.journal import JournalEntry, OrderJournal
from app.services.log_events import EventKind, LogLevel
from app.services.order_words import request_action
from app.services.session import TerminalSession
from app.services.settling import SESSION_DELAY_SECONDS, OrderSettler, Sought, backoff_delays
from app.services.tasks import Tasks, may_start, spawn

log = logging.getLogger("tradeterm.services")

DISMISSED = "dismissed"


@dataclass(frozen=True)
class Unknown:
    """One order or accept that may have reached the server and is not settled."""

    client_order_id: str
    kind: str  # "limit", "market" or "accept"
    what: str  # the trader's words: "Buy BTC for 100 USD", "Accept the buy of quote …"
    sent_at: datetime  # this machine's clock, as journaled
    detail: str  # the last thing known (why it is unknown, the last look-up)
    looked_at: datetime  # when the entry last changed

    def facts(self) -> str:
        """What the trader is told before dismissing it."""
        return (
            f"{self.what}, sent {self.sent_at:%Y-%m-%d %H:%M:%S} UTC "
            f"(client order id {self.client_order_id}).\n\n"
            f"Last known: {self.detail or 'the answer was lost'} "
            f"(as of {self.looked_at:%H:%M:%S} UTC).\n\n"
            "The request may have reached the server: if it did, the order executes or rests "
            "there whatever this terminal does, and then shows in the order list and the "
            "balances. Dismissing only stops the terminal from looking for it; nothing is "
            "cancelled."
        )


def describe(entry: JournalEntry, known_pairs: Iterable[str], precision: Precision) -> str:
    """A journaled request in the trader's words (its JSON is only in the details)."""
    body = entry.request
    if entry.kind == "accept":
        side = str(body.get("side", "")) or "one side"
        return f"Accept the {side} of quote {body.get('orderId', '?')}"
    source, destination = str(body.get("source", "")), str(body.get("destination", ""))
    try:
        size = Decimal(str(body.get("size", "")))
        limit = body.get("limit")
        wire = None if limit is None else Price(Decimal(str(limit)), source, destination)
        words = request_action(source, destination, size, wire, known_pairs, precision)
    except (InvalidOperation, ValueError, KeyError):
        words = f"Sell {body.get('size', '?')} {source} for {destination}"
    return f"{words} ({entry.kind})"


class UnknownOutcomes:
    """The open unknowns of one session, published on ``changed`` when the list changes."""

    def __init__(
        self,
        session: TerminalSession,
        journal: OrderJournal,
        *,
        session_delay: float = SESSION_DELAY_SECONDS,
        tasks: Tasks | None = None,
    ) -> None:
        self.session = session
        self._tasks = tasks  # the terminal's task owner: followers end with the terminal
        self.journal = journal
        self.session_delay = session_delay
        self.current: tuple[Unknown, ...] = ()
        self.changed: Topic[tuple[Unknown, ...]] = Topic("unknown outcomes")
        self._followers: dict[str, asyncio.Task[None]] = {}

    def close(self) -> None:
        for task in self._followers.values():
            task.cancel()
        self._followers.clear()

    def following(self) -> list[str]:
        """The clientOrderIds looked for by this service now (not the live desks' own)."""
        return [cid for cid, task in self._followers.items() if not task.done()]

    def _precision(self) -> Precision:
        precision = Precision()
        precision.learn(self.session.pair_info)
        return precision

    def refresh(self, *_: object) -> None:
        """Read the journal again; publish when the list changed. Cheap: one indexed query."""
        account = self.session.environment.account
        pairs, precision = self.session.pair_info, self._precision()
        found = tuple(
            Unknown(
                entry.client_order_id,
                entry.kind,
                describe(entry, pairs, precision),
                entry.created_at,
                entry.detail,
                entry.updated_at,
            )
            for entry in self.journal.unsettled(account)
            if entry.status == "unknown"
        )
        if found != self.current:
            self.current = found
            self.changed.publish(found)

    def dismiss(self, client_order_id: str) -> bool:
        """The trader, told the facts, stops the looking. False when it is no longer unknown
        (settled meanwhile): nothing is dismissed then."""
        entry = self.journal.entry(client_order_id)
        if entry is None or entry.status != "unknown":
            self.refresh()
            return False
        what = describe(entry, self.session.pair_info, self._precision())
        self.journal.record_outcome(
            client_order_id,
            DISMISSED,
            detail=f"dismissed by the trader while unknown; last known: {entry.detail}",
        )
        follower = self._followers.pop(client_order_id, None)
        if follower is not None:
            follower.cancel()
        self.session.log(
            LogLevel.WARNING,
            f"{what}: outcome still unknown, dismissed — the terminal no longer looks for it; "
            "if the server executed it, the order list and the balances show it",
        )
        self.refresh()
        return True

    def follow(self, entries: Iterable[JournalEntry]) -> None:
        """Look for each of ``entries`` still unknown (what the start-up reconcile left) after
        1, 2, 4 … seconds, then every ``session_delay`` seconds for the whole session, until
        the server shows it."""
        offset = self.session.client.clock.offset
        for entry in entries:
            if not may_start(self._tasks):
                break
            if entry.status != "unknown" or entry.client_order_id in self._followers:
                continue
            task = spawn(
                self._tasks,
                self._follow(Sought.from_entry(entry, offset)),
                f"follow {entry.client_order_id}",
            )
            self._followers[entry.client_order_id] = task
            task.add_done_callback(self._follower_done(entry.client_order_id))
        self.refresh()

    def _follower_done(self, client_order_id: str) -> Callable[[asyncio.Task[None]], None]:
        def done(task: asyncio.Task[None]) -> None:
            if self._followers.get(client_order_id) is task:
                del self._followers[client_order_id]
            if not task.cancelled() and task.exception() is not None:
                log.error("following %s failed", client_order_id, exc_info=task.exception())

        return done

    def _still_unknown(self, client_order_id: str) -> Callable[[], bool]:
        def check() -> bool:
            entry = self.journal.entry(client_order_id)
            return entry is not None and entry.status == "unknown"

        return check

    async def _follow(self, sought: Sought) -> None:
        verdict = await OrderSettler(self.session.client).follow(
            sought,
            delays=backoff_delays(ceiling=self.session_delay),
            still_open=self._still_unknown(sought.client_order_id),
        )
        if verdict is None or verdict.order is None:
            return
        order = verdict.order
        self.journal.record_order(sought.client_order_id, order)
        self.session.log(
            LogLevel.SUCCESS if order.result.status in ("filled", "submitted") else LogLevel.INFO,
            f"order {order.order_id} (sent in an earlier run, outcome was unknown): "
            f"{order.result.status}{' — ' + order.result.error if order.result.error else ''}",
            EventKind.FILL if order.result.status == "filled" else EventKind.NONE,
        )
        self.session.after_fill(order)
        self.refresh()
