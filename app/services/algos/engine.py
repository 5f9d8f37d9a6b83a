"""The execution engine: works parent orders over time by sending children through the order
desk — the same journal, checks, risk limits and settling as a hand order. No Qt.

Each live parent has one task that asks ``plans.decide`` what to do and does it: send a child,
wait (for a time, a new book, a child's end or the trader), fire a trigger, finish. A child is
written to the algo store before it goes to the desk, and counted against its parent from that
moment (``Parent.room``) until the server shows its end:

- filled: its size is filled, its total received;
- resting (the price moved past the collar as it left): in flight, looked up until its end
  time has passed and the server shows it filled or cancelled;
- refused, or provably never sent: nothing filled;
- unknown (the answer was lost): the desk keeps looking it up and publishes the answer; the
  parent sends nothing until then. The journal is read again every ``unknown_poll`` seconds,
  so an answer found by the start-up reconcile or the unknown-outcomes list counts too.

A pause or a stop only stops new children: the service has no cancel, so what is out stays
out, is still followed to its end, and is said.

Triggers (stops, take-profits, trailing stops, a bracket's exits) are evaluated on every new
market snapshot, in this process: they are "armed in this terminal" and fire only while it
runs. After a restart every parent comes back paused — armed ones disarmed — with what it
filled read from the journal and the server (``restore``), never from memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from functools import partial
from typing import Any, Protocol

from app.api import ServiceError
from app.domain import Price
from app.domain.fill_price import FillPrice
from app.domain.pair_terms import Side
from app.domain.records import Order
from app.services.algos.parents import ARMED_HERE, Child, Parent, child_order_id
from app.services.algos.plans import (
    Finish,
    Fire,
    Moment,
    Send,
    Skip,
    Track,
    Wait,
    decide,
)
from app.services.algos.restore import child_fates, journaled_children
from app.services.algos.specs import AlgoSpec
from app.services.algos.store import AlgoStore
from app.services.events import Topic
from app.services.health import stale_reason
from app.services.journal import FILL
from app.services.log_events import EventKind, LogLevel
from app.services.market import MarketSnapshot
from app.services.order_desk import OrderDesk, SubmitResult
from app.services.tasks import Tasks, spawn
from app.services.ticket import TicketError, TicketInput

log = logging.getLogger("tradeterm.algos")

#: Seconds between look-ups of a resting child (and after its end, until the server ends it).
RESTING_POLL = 2.0
#: Seconds between reads of the journal for a child whose answer was lost.
UNKNOWN_POLL = 5.0
#: A wait "until something changes" still looks again this often.
IDLE_POLL = 5.0
#: Children in a row that provably never left before the parent pauses.
FAILURES_BEFORE_PAUSE = 3
POLL_OWNER = "algos"


ELSEWHERE = (
    "worked by another Tradeterm process on this machine (the window or tradeterm algo): "
    "pause or stop it there first"
)


class ParentGate(Protocol):
    """What the engine asks of the session's risk limits and kill switch."""

    @property
    def halted(self) -> bool: ...

    def admit_parent(self, open_parents: int) -> None: ...


class AlgoRefused(ValueError):
    """A parent that cannot be started, in the trader's words."""


class ExecutionEngine:
    """Owns the parents of one account (module docstring)."""

    def __init__(
        self,
        desk: OrderDesk,
        store: AlgoStore,
        *,
        tasks: Tasks | None = None,
        gate: ParentGate | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        resting_poll: float = RESTING_POLL,
        unknown_poll: float = UNKNOWN_POLL,
    ) -> None:
        self.desk = desk
        self.store = store
        self.gate = gate
        self._tasks = tasks
        self._monotonic = monotonic
        self.resting_poll = resting_poll
        self.unknown_poll = unknown_poll
        self.parents: dict[str, Parent] = {}
        #: A parent changed (its id): the Working orders dock re-reads it.
        self.changed: Topic[str] = Topic("algo parents")
        self._runners: dict[str, asyncio.Task[None]] = {}
        self._followers: dict[str, asyncio.Task[None]] = {}
        self._wakes: dict[str, asyncio.Event] = {}
        self._book_waiters: set[str] = set()  # parents whose next step needs a new book
        self._last_slice: dict[str, float] = {}
        self._failures: dict[str, int] = {}
        self._owner: dict[str, str] = {}  # child clientOrderId -> parent id
        self._closed = False
        session = desk.session
        self._unsubscribe = [
            desk.results.subscribe(self._on_result),
            session.market.changed.subscribe(self._on_market),
        ]

    # -- reading ------------------------------------------------------------------------------

    @property
    def account(self) -> str:
        return self.desk.session.environment.account

    def server_now(self) -> datetime:
        return self.desk.session.client.clock.server_now()

    def open_parents(self) -> list[Parent]:
        return [parent for parent in self.parents.values() if not parent.ended]

    def parent_of(self, client_order_id: str) -> Parent | None:
        owner = self._owner.get(client_order_id)
        return None if owner is None else self.parents.get(owner)

    # -- the trader's commands ----------------------------------------------------------------

    def submit(self, spec: AlgoSpec, *, linked: str = "") -> Parent:
        """Start a parent: validated, admitted by the risk limits, stored, running. Raises
        AlgoRefused (or the gate's refusal) with nothing started."""
        try:
            spec.validate()
        except ValueError as exc:
            raise AlgoRefused(str(exc)) from None
        if spec.pair not in self.desk.session.pair_info and self.desk.session.pair_info:
            raise AlgoRefused(f"{spec.pair} is not a pair the service lists")
        if self.gate is not None:
            self.gate.admit_parent(len(self.open_parents()))
        parent = Parent(f"algo-{uuid.uuid4().hex[:12]}", spec, self.account, self.server_now())
        parent.linked = linked
        parent.state = self._live_state(parent)
        if spec.info.armed:
            parent.note = ARMED_HERE
        self.parents[parent.id] = parent
        self.store.save_parent(parent)
        self._watch_pairs()
        self.changed.publish(parent.id)
        self._say(LogLevel.INFO, parent, f"started: {self.describe(parent)}")
        self._start(parent)
        return parent

    def pause(self, parent_id: str, why: str = "paused by the trader") -> None:
        parent = self.parents[parent_id]
        if parent.elsewhere:
            raise AlgoRefused(ELSEWHERE)
        if not parent.live:
            return
        armed = parent.spec.info.armed and not parent.fired
        parent.state = "disarmed" if armed else "paused"
        parent.note = f"{why}; {parent.in_flight_words()}"
        self._stop_runner(parent)
        self._saved(parent)
        self._say(LogLevel.WARNING, parent, parent.note)

    def resume(self, parent_id: str) -> None:
        """Resume a paused parent, or re-arm a disarmed one. Refused while trading is halted
        or while another terminal process works it."""
        parent = self.parents[parent_id]
        if parent.state not in ("paused", "disarmed") and not parent.elsewhere:
            return
        if self.gate is not None and self.gate.halted:
            raise AlgoRefused("trading is halted by the kill switch: re-enable trading first")
        if not self.store.claim(parent.id):
            raise AlgoRefused(ELSEWHERE)
        parent.elsewhere = False
        self._take_up_stored(parent)
        if parent.ended:
            self.store.release(parent.id)
            self.changed.publish(parent.id)
            return
        parent.state = self._live_state(parent)
        parent.note = ARMED_HERE if parent.state == "armed" else ""
        self._failures.pop(parent.id, None)
        self._saved(parent)
        self._say(LogLevel.INFO, parent, "re-armed" if parent.state == "armed" else "resumed")
        self._start(parent)

    def _take_up_stored(self, parent: Parent) -> None:
        """What the store says of ``parent`` since another process may have worked it: its
        state and the children it sent, each unknown here until the journal or the server
        shows its end (so the parent sends nothing until then)."""
        stored = self.store.parents(self.account, parent.id)
        if not stored:
            return
        latest = stored[0]
        if latest.ended:
            parent.state, parent.note = latest.state, latest.note
        parent.fired = parent.fired or latest.fired
        parent.slices_sent = max(parent.slices_sent, latest.slices_sent)
        known = {child.client_order_id for child in parent.children}
        for child in latest.children:
            if child.client_order_id in known:
                continue
            unknown = child.ended("unknown", detail="sent by another terminal")
            parent.add_child(unknown)
            self._owner[child.client_order_id] = parent.id
            self._follow(parent, unknown)

    def stop(self, parent_id: str) -> None:
        """No more children; what is out stays out (no cancel) and is followed to its end."""
        parent = self.parents[parent_id]
        if parent.elsewhere:
            raise AlgoRefused(ELSEWHERE)
        if parent.ended:
            return
        parent.state = "stopped"
        parent.note = f"stopped by the trader; {parent.in_flight_words()}"
        self._stop_runner(parent)
        self._saved(parent)
        self._say(LogLevel.WARNING, parent, parent.note)

    def halt_all(self, why: str) -> None:
        """The kill switch: every live parent paused, every armed one disarmed, now (no await:
        no child can start between this call and its return)."""
        for parent in list(self.parents.values()):
            if parent.live and not parent.elsewhere:  # another process's are its own to halt
                self.pause(parent.id, why)

    # -- lifecycle ----------------------------------------------------------------------------

    async def restore(self) -> list[Parent]:
        """Every stored parent of the account, its children's fates read from the journal and
        the server; the unfinished ones paused (armed ones disarmed) until the trader says."""
        # A parent submitted in this run before the restore came round is already here and
        # being worked: its stored row is its own, and taking it again would make a second,
        # paused copy of it (resumed, two workers for one parent).
        restored = [p for p in self.store.parents(self.account) if p.id not in self.parents]
        for parent in restored:
            for child in journaled_children(parent, self.desk.journal):
                parent.add_child(child)
        fates = await child_fates(
            [child for parent in restored for child in parent.children],
            self.desk.journal,
            self.desk.session.client,
        )
        restored = [p for p in restored if p.id not in self.parents]  # submitted meanwhile
        for parent in restored:
            parent.children = [fates.get(c.client_order_id, c) for c in parent.children]
            for child in parent.children:
                self._owner[child.client_order_id] = parent.id
            if not parent.ended and self.store.worked_elsewhere(parent.id):
                parent.elsewhere = True  # its state is the other process's to say
                parent.note = ELSEWHERE
                self.parents[parent.id] = parent
                continue
            if not parent.ended:
                was_armed = parent.spec.info.armed and not parent.fired
                parent.state = "disarmed" if was_armed else "paused"
                parent.note = (
                    "was armed when the terminal stopped: re-arm it to watch the price again"
                    if was_armed
                    else "restored after a restart: resume to continue"
                )
                self.store.save_parent(parent)
            self.parents[parent.id] = parent
            for child in parent.children:
                if child.status in ("resting", "unknown"):
                    self._follow(parent, child)
        self._watch_pairs()
        for parent in restored:
            self.changed.publish(parent.id)
        return restored

    async def aclose(self) -> None:
        """Stop every task (children out stay as they are: the journal and the store keep
        them for the next start) and close the store."""
        if self._closed:
            return
        self._closed = True
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        tasks = [*self._runners.values(), *self._followers.values()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self.store.close()

    # -- words ---------------------------------------------------------------------------------

    def describe(self, parent: Parent) -> str:
        spec = parent.spec
        return (
            f"{spec.info.label} {spec.pair_side.verb} {spec.pair} with {spec.amount} {spec.source}"
        )

    def _say(
        self, level: LogLevel, parent: Parent, text: str, kind: EventKind = EventKind.NONE
    ) -> None:
        self.desk.session.log(level, f"{parent.spec.info.label} {parent.id}: {text}", kind)

    # -- running ------------------------------------------------------------------------------

    def _live_state(self, parent: Parent) -> Any:
        if parent.spec.info.armed and not parent.fired:
            return "armed"
        if parent.spec.start_at is not None and not parent.children:
            return "waiting"
        return "working"

    def _start(self, parent: Parent) -> None:
        if self._closed or parent.id in self._runners:
            return
        if not self.store.claim(parent.id):  # a new parent's lock is free; a resumed one was taken
            raise AlgoRefused(ELSEWHERE)
        self._wakes[parent.id] = asyncio.Event()
        task = spawn(self._tasks, self._run(parent), f"working {parent.id}")
        self._runners[parent.id] = task
        task.add_done_callback(partial(self._runner_ended, parent.id))

    def _runner_ended(self, parent_id: str, task: asyncio.Task[None]) -> None:
        if self._runners.get(parent_id) is task:
            del self._runners[parent_id]
        parent = self.parents.get(parent_id)
        if parent_id not in self._runners and (parent is None or not parent.live):
            # No send of ours is under way: another process may take it up now.
            self.store.release(parent_id)

    def _stop_runner(self, parent: Parent) -> None:
        """The runner ends at its next look (never cancelled: one in the middle of a send
        would turn a known answer into an unknown one)."""
        self._runners.pop(parent.id, None)
        self.wake(parent.id)

    def wake(self, parent_id: str) -> None:
        event = self._wakes.get(parent_id)
        if event is not None:
            event.set()

    def _on_market(self, _snapshot: MarketSnapshot) -> None:
        """A new book wakes the parents waiting on one (an armed trigger, a price beyond the
        limit, no fresh price), not those waiting for a time: every fill polls the balances,
        and each answer is a new snapshot."""
        for parent_id in self._book_waiters:
            self.wake(parent_id)

    def _saved(self, parent: Parent) -> None:
        self.store.save_parent(parent)
        self.changed.publish(parent.id)

    def _moment(self, parent: Parent) -> Moment:
        spec = parent.spec
        snapshot = self.desk.session.market.snapshot
        info = snapshot.pair_info.get(spec.pair)
        decimals = None
        increment = None
        if info is not None:
            increment = info.price_increment
            decimals = info.base_decimals if spec.source == info.pair.base else info.quote_decimals
        last = self._last_slice.get(parent.id)
        # A stale book may be minutes old: no child is priced, no trigger fires on it.
        session = self.desk.session
        stale = stale_reason(
            session.top_of_book.snapshot(), session.health.current.health, time.monotonic()
        )
        return Moment(
            None if stale else snapshot.top(spec.pair),
            self.server_now(),
            None if last is None else self._monotonic() - last,
            8 if decimals is None else decimals,
            increment,
        )

    async def _run(self, parent: Parent) -> None:
        wake = self._wakes[parent.id]
        me = asyncio.current_task()
        # A resume may start a new runner while this one finishes a send: only one decides.
        while parent.live and not self._closed and self._runners.get(parent.id) is me:
            wake.clear()
            decision = decide(parent, self._moment(parent))
            if isinstance(decision, Send):
                await self._send(parent, decision)
            elif isinstance(decision, Wait):
                timeout = IDLE_POLL if decision.seconds is None else decision.seconds
                if decision.seconds is None:
                    self._book_waiters.add(parent.id)
                await _wait(wake, max(0.0, timeout))
                self._book_waiters.discard(parent.id)
            elif isinstance(decision, Fire):
                self._fire(parent, decision.why)
            elif isinstance(decision, Track):
                parent.best = decision.best
                self._saved(parent)
            elif isinstance(decision, Skip):
                parent.slices_sent += 1
                self._last_slice[parent.id] = self._monotonic()
                parent.last_slice_at = self.server_now()
                self._saved(parent)
                self._say(LogLevel.INFO, parent, f"slice {parent.slices_sent}: {decision.why}")
            elif isinstance(decision, Finish):
                self._finish(parent, decision.note)

    def _fire(self, parent: Parent, why: str) -> None:
        parent.fired = True
        parent.state = "working"
        parent.note = f"fired: {why}"
        self._saved(parent)
        self._say(LogLevel.WARNING, parent, parent.note)
        if parent.linked:  # one exit of a bracket fired: its partner stands down
            for other in self.parents.values():
                if other.linked == parent.linked and other.id != parent.id and not other.ended:
                    other.state = "done"
                    other.note = f"disarmed: its partner {parent.id} fired"
                    self._stop_runner(other)
                    self._saved(other)

    def _finish(self, parent: Parent, note: str) -> None:
        parent.state = "done"
        parent.note = note
        self._saved(parent)
        if note == "filled":  # one notice per parent; its children's fills are plain lines
            average = parent.average_price()
            at = ""
            if average is not None:
                price = FillPrice(parent.spec.pair_side.pair, average)
                at = f" at {price.phrase(self.desk.precision)}"
            self._say(LogLevel.SUCCESS, parent, f"filled{at}", EventKind.FILL)
        else:
            self._say(LogLevel.INFO, parent, note)
        if parent.spec.kind == "bracket" and parent.received > 0:
            self._arm_exits(parent)
        self._watch_pairs()

    def _arm_exits(self, entry: Parent) -> None:
        """A bracket's exits, for what the entry bought (or sold) and no more."""
        spec = entry.spec
        side: Side = "sell" if spec.side == "buy" else "buy"
        exits = (("take_profit", spec.take_profit), ("stop", spec.stop_loss))
        for kind, trigger in exits:
            if trigger is None:
                continue
            exit_spec = AlgoSpec(
                kind,  # type: ignore[arg-type]
                spec.pair,
                side,
                entry.received,
                collar_bps=spec.collar_bps,
                child_seconds=spec.child_seconds,
                trigger=trigger,
                trigger_ref=spec.trigger_ref,
            )
            try:
                self.submit(exit_spec, linked=entry.id)
            except (AlgoRefused, TicketError) as exc:
                self._say(
                    LogLevel.ERROR, entry, f"its {kind.replace('_', '-')} was not armed: {exc}"
                )

    # -- children -----------------------------------------------------------------------------

    async def _send(self, parent: Parent, plan: Send) -> None:
        spec = parent.spec
        pair = spec.pair_side.pair
        client_order_id = child_order_id(parent.id)
        now = self.server_now()
        child = Child(
            client_order_id,
            parent.id,
            plan.size,
            plan.limit,
            now,
            now + timedelta(seconds=plan.seconds),
        )
        parent.add_child(child)
        self._owner[client_order_id] = parent.id
        if parent.state == "waiting":  # its start time has come
            parent.state = "working"
        if plan.slice:
            parent.slices_sent += 1
            self._last_slice[parent.id] = self._monotonic()
            parent.last_slice_at = now
        if parent.arrival_mid is None:
            top = self.desk.session.market.snapshot.top(spec.pair)
            parent.arrival_mid = None if top is None else top.mid
        self.store.add_child(child, parent)  # before the desk: a crash after this is asked
        self.changed.publish(parent.id)
        ticket = TicketInput(
            spec.source,
            spec.destination,
            plan.size,
            "limit",
            Price(plan.limit, pair.base, pair.quote),
            child.end_at,
        )
        request = ticket.request(client_order_id)
        try:
            result = await self.desk.place(ticket, request, self.desk.checks(ticket))
        except TicketError as exc:  # refused here (a check, a risk limit): nothing left
            self._child_ended(parent, child.ended("empty", detail=exc.message))
            if exc.field == "end_at":  # the loop was too busy to send it in time: again
                await self._failed(parent, exc.message)
            elif parent.live:
                self.pause(parent.id, f"refused before sending: {exc.message}")
            return
        self._apply(parent, client_order_id, result)
        if result.status == "failed":
            await self._failed(parent, result.message)
            return
        self._failures.pop(parent.id, None)
        if result.status == "rejected" and parent.live and spec.kind != "credit_retry":
            self.pause(parent.id, f"refused by the service: {result.message}")
            self._say(LogLevel.WARNING, parent, "paused after a refusal", EventKind.REFUSAL)

    async def _failed(self, parent: Parent, message: str) -> None:
        """A child that provably never left: the parent tries again after a back-off, and
        pauses after ``FAILURES_BEFORE_PAUSE`` in a row."""
        failures = self._failures.get(parent.id, 0) + 1
        self._failures[parent.id] = failures
        if failures >= FAILURES_BEFORE_PAUSE and parent.live:
            self.pause(parent.id, f"{failures} children in a row were not sent: {message}")
        else:
            await asyncio.sleep(min(2.0**failures, 30.0))

    def _on_result(self, result: SubmitResult) -> None:
        """An answer the desk found later (a lost one settled) for one of our children."""
        parent = self.parent_of(result.client_order_id)
        if parent is None:
            return
        child = parent.child(result.client_order_id)
        if child is None or child.status not in ("unknown", "sending"):
            return
        if child.status == "sending" and result.status == "unknown":
            self._apply(parent, result.client_order_id, result)
            return
        if child.status == "unknown":
            self._apply(parent, result.client_order_id, result)

    def _apply(self, parent: Parent, client_order_id: str, result: SubmitResult) -> None:
        child = parent.child(client_order_id)
        if child is None:
            return
        if result.status == "filled" and result.order is not None:
            self._child_ended(parent, _filled(child, result.order))
        elif result.status == "submitted" and result.order is not None:
            resting = child.ended("resting", order_id=result.order.order_id)
            self._child_ended(parent, resting)
            self._follow(parent, resting)
        elif result.status == "unknown":
            unknown = child.ended("unknown", detail=result.message)
            self._child_ended(parent, unknown)
            self._follow(parent, unknown)
        else:
            self._child_ended(parent, child.ended("empty", detail=result.message))

    def _child_ended(self, parent: Parent, child: Child) -> None:
        parent.replace_child(child)
        self.changed.publish(parent.id)
        self.wake(parent.id)

    def _settled_in_journal(self, parent: Parent, child: Child) -> bool:
        """Whether the journal now shows what an unknown child became (a look-up elsewhere —
        the desk's, the start-up reconcile's, the unknown-outcomes list's — settled it); the
        child is updated when it does."""
        journal = self.desk.journal
        entry = journal.entry(child.client_order_id)
        if entry is None or entry.status in ("sending", "unknown", "dismissed"):
            return False
        if entry.status == "filled":
            fact = journal.facts(FILL, [entry.order_id]).get(entry.order_id)
            if fact is None:
                return False  # filled, its amounts not frozen yet: look again
            filled = child.ended(
                "filled",
                filled=Decimal(str(fact["size"])),
                received=Decimal(str(fact["total"])),
                order_id=entry.order_id,
            )
            self._child_ended(parent, filled)
        elif entry.status == "submitted":  # its follower goes on looking it up
            self._child_ended(parent, child.ended("resting", order_id=entry.order_id))
        else:
            self._child_ended(parent, child.ended("empty", detail=entry.detail))
        return True

    def _follow(self, parent: Parent, child: Child) -> None:
        """Follow a resting or unknown child until the server shows its end (one follower per
        child, through both states: an unknown one may turn out resting)."""
        if self._closed or child.client_order_id in self._followers:
            return
        cid = child.client_order_id
        task = spawn(self._tasks, self._follow_child(parent, cid), f"following {cid}")
        self._followers[cid] = task
        task.add_done_callback(partial(self._follower_ended, cid))

    def _follower_ended(self, client_order_id: str, task: asyncio.Task[None]) -> None:
        if self._followers.get(client_order_id) is task:
            del self._followers[client_order_id]

    async def _follow_child(self, parent: Parent, client_order_id: str) -> None:
        delay = self.resting_poll
        while True:
            child = parent.child(client_order_id)
            if child is None or child.status not in ("unknown", "resting"):
                return
            if child.status == "unknown":
                # The desk's own settler answers sooner, through ``results``.
                if not self._settled_in_journal(parent, child):
                    await asyncio.sleep(self.unknown_poll)
                continue
            await asyncio.sleep(delay)
            delay = await self._look_up_resting(parent, child)

    async def _look_up_resting(self, parent: Parent, child: Child) -> float:
        """Ask the server once what a resting child became; the delay before the next look."""
        try:
            order = await self.desk.session.client.order(child.order_id)
        except ServiceError as exc:
            log.info("resting child %s not looked up: %s", child.order_id, exc)
            return min(self.resting_poll * 8, 30.0)
        status = order.result.status
        if status == "filled":
            self.desk.journal.record_order(child.client_order_id, order)
            self._child_ended(parent, _filled(child, order))
            self.desk.session.after_fill(order)
        elif status in ("canceled", "rejected"):
            self.desk.journal.record_order(child.client_order_id, order)
            ended = child.ended("empty", detail="ended at its end time without filling")
            self._child_ended(parent, ended)
        return self.resting_poll

    def _watch_pairs(self) -> None:
        """The top of book of every pair a working parent needs is polled, watched or not."""
        pairs = sorted({p.spec.pair for p in self.parents.values() if not p.ended})
        self.desk.session.poll_also(pairs, POLL_OWNER)


def _filled(child: Child, order: Order) -> Child:
    total = order.result.total
    return child.ended(
        "filled",
        filled=order.size.value,
        received=Decimal(0) if total is None else total.value,
        order_id=order.order_id,
        filled_at=order.result.executed_at,
    )


async def _wait(event: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), timeout=seconds)
