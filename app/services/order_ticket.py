"""The order ticket's truth, without Qt: one state machine per ticket on screen.

How data flows::

    tick / balances answer ─► Market (one numbered MarketSnapshot) ─► OrderTicket._on_market
    trader's edit / estimate answer / health ───────────────────────► OrderTicket._publish
        ─► one Preview per change (checks, what-if, estimate, fills-now, the exact OrderRequest
           with its clientOrderId, the snapshot id) on ``previews``
        ─► (Confirming: the confirmation is answered for the preview it opened with; newer
           previews refresh its indicative price and say what changed)
        ─► Send: the current preview's request and checks, if they send what the confirmed
           preview showed (same request to the byte, no new check), else
           nothing is sent and the new preview is shown
        ─► OrderDesk.send: journal the exact body, POST it, settle a lost answer
        ─► the desk's ``results`` ─► the ticket's state and its ``results`` (once per answer)

States (one enum, ``TicketState``)::

    EDITING ─Enter─► CONFIRMING ─Send─► SENDING ─► SETTLED | REFUSED | UNKNOWN
       ▲   └──────────(no confirmation)───┘            UNKNOWN ─(settler finds it)─► SETTLED
       └──── Cancel, or any edit after an answer ◄─────┘

Entry rules (nothing the trader typed changes meaning under them):

- An amount is a value with its asset. A side or pair switch, or the units toggle (base or
  quote, remembered per pair), that changes the amount's asset converts it at the mid of the
  book, rounded half-even to the new asset's decimals, with a note on the ticket's outcome
  line ("10,000 USD → 0.10988 BTC at 91,007.71 (mid)"); with no price it is cleared with a
  note. Prefill (click-to-trade), presets and hit/lift follow the same rule. The service
  takes the size in the asset sold only: an amount in the asset bought is sent as the asset
  sold at the limit (exact terms) or, for a market order, at the touch (the latest while
  editing, held while a confirmation is up; shown with ≈, the confirmation says the exact
  amount sent). ``app.services.order_amounts``.
- A limit belongs to its pair: a pair switch re-seeds it from the new pair's touch for the
  side (the ask for a buy, the bid for a sell), or clears it when there is none, with a note.
  A limit kept through a side switch blocks Send while it is beyond the distance threshold
  (Settings) from the touch, until the trader edits it.
- Hit bid / lift offer (and a double-click on a price) are marketable: a limit at the touch
  plus the slippage collar (Settings, bps) on the pair's tick, ending seconds after the key,
  so it fills now or expires; it never rests unless the trader typed a resting limit.
- Increments come from the service's pairs list: an amount takes at most its asset's
  decimals, a limit is a whole number of the pair's price increment; checked on every edit.

A press of Send while CONFIRMING or SENDING does nothing. The checks run once per preview on
that preview's snapshot; the send uses them as they are (no second copy of the market).
The widget only renders previews and forwards the trader's input (``app/ui/panels``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from app.domain import utc_now
from app.domain.display import Precision, decimals_of
from app.domain.money import Amount, AssetPair
from app.domain.order_request import OrderType
from app.domain.pair_terms import PairSide, Side
from app.services.algos.credit_retry import retry_spec
from app.services.algos.credit_window import is_credit_refusal
from app.services.algos.specs import AlgoSpec
from app.services.estimates import EstimateFeed, EstimateResult
from app.services.events import Topic
from app.services.health import Health, HealthState
from app.services.market import MarketSnapshot
from app.services.order_amounts import (
    amount_places,
    collar_price,
    convert_amount,
    increment_error,
    plain,
    sold_size,
)
from app.services.order_desk import AlreadySending, OrderDesk, SubmitResult
from app.services.order_intent import (
    Conversion,
    OrderIntent,
    Preview,
    TicketFields,
    TicketState,
    predict,
)
from app.services.ticket import TicketError, TicketInput, parse_number

__all__ = ["CANNOT_SEND", "OrderTicket", "Step", "TicketFields", "TicketState"]

#: Health in which Send is not offered.
CANNOT_SEND = {Health.OFFLINE: "Offline", Health.AUTH_EXPIRED: "Login expired"}

#: What an answer makes of the ticket's state.
STATE_OF: dict[str, TicketState] = {
    "filled": TicketState.SETTLED,
    "submitted": TicketState.SETTLED,
    "rejected": TicketState.REFUSED,
    "failed": TicketState.REFUSED,
    "unknown": TicketState.UNKNOWN,
}

#: The fields that make the order itself (an edit of one is a new order).
ORDER_FIELDS = ("pair", "side", "size", "order_type", "limit", "amount_asset")

#: The fields that set the order's price and end: an edit of one ends hit/lift's marketable
#: terms (the amount may still be typed after the key).
PRICE_FIELDS = ("pair", "side", "order_type", "limit", "end_at", "end_enabled")

#: The states an answer to the last send moves on (an edit or a confirmation since stays).
ANSWERABLE = (TicketState.SENDING, TicketState.UNKNOWN, TicketState.SETTLED, TicketState.REFUSED)

StepKind = Literal[
    "busy", "cannot_send", "invalid", "blocked", "confirming", "sending", "moved", "not_sent"
]


@dataclass(frozen=True)
class Step:
    """What a press of Send (Enter, the button, a confirmation's answer) did: ``kind``, the
    words for the trader, the input to fix (``field``) and the preview concerned."""

    kind: StepKind
    message: str = ""
    field: str = ""
    preview: Preview | None = None


class OrderTicket:
    """One ticket: its fields, its state, its latest ``Preview``; sends through ``desk``.

    ``presets`` are the size presets per asset (the first is the asset's default size);
    ``resting_hours`` the default end of a limit order, counted from the last edit."""

    def __init__(
        self,
        desk: OrderDesk,
        estimates: EstimateFeed,
        *,
        precision: Precision | None = None,
        presets: Mapping[str, tuple[Decimal, ...]] | None = None,
        resting_hours: float = 0.0,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self.desk = desk
        self.precision = precision or desk.precision
        self.presets: Mapping[str, tuple[Decimal, ...]] = dict(presets or {})
        self.resting_hours = resting_hours
        self._now = now
        self._estimates = estimates
        session = desk.session
        self._health: HealthState = session.health.current
        self.fields = TicketFields()
        self.state = TicketState.EDITING
        self._end_touched = False  # the trader set the end time: no default replaces it
        self._asked: TicketInput | None = None  # the order whose estimate is wanted
        self._estimate: EstimateResult | None = None
        self._last_sent: str | None = None  # clientOrderId of the last send
        self._last_ticket: TicketInput | None = None  # what it asked, in the trader's units
        #: After a refusal for credit outside business hours: the same order as a parent that
        #: waits for the credit window (offered, never started without the trader).
        self.credit_retry: AlgoSpec | None = None
        self._units: dict[str, str] = {}  # the amount's asset per pair, as toggled
        self._rate: Decimal | None = None  # the touch a market order's conversion uses
        self._note: tuple[str, str] | None = None  # what the last edit did to the amount
        self._limit_switched = False  # the limit was typed for another side or pair
        self._number = 0
        self._task: asyncio.Task[None] | None = None
        self.previews: Topic[Preview] = Topic("order ticket previews")
        self.results: Topic[SubmitResult] = Topic("order ticket results")
        #: A send that ended without an answer of the desk (a bug, a race): in words.
        self.failures: Topic[str] = Topic("order ticket failures")
        self._default_end()
        self.preview = self._make_preview()
        self._unsubscribe = [
            session.market.changed.subscribe(self._on_market),
            session.health.changes.subscribe(self._on_health),
            estimates.results.subscribe(self._on_estimate),
            desk.results.subscribe(self._on_result),
            desk.sending_changed.subscribe(self._on_desk_sending),
        ]

    def close(self) -> None:
        """Stop following the market and the desk. A send in flight is cancelled with its
        owner: the desk journals it as unknown, and the settling at the next start looks it up
        (it may have reached the service)."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        self._estimates.cancel()
        if self._task is not None:
            self._task.cancel()

    async def stop_estimates(self) -> None:
        """The estimate feed stops before the connection closes (no request cut off at quit)."""
        await self._estimates.close()

    # -- reading --------------------------------------------------------------------------------

    @property
    def market(self) -> MarketSnapshot:
        return self.preview.snapshot

    @property
    def estimate(self) -> EstimateResult | None:
        """The latest estimate of the order on the ticket, however old."""
        return self.preview.estimate

    @property
    def health(self) -> HealthState:
        return self._health

    def default_size(self, asset: str) -> Decimal | None:
        """The default amount of ``asset`` (the first of its size presets), None without one."""
        presets = self.presets.get(asset)
        return presets[0] if presets else None

    def touch(self, side: Side) -> Decimal | None:
        """The price hitting the bid (sell) or lifting the offer (buy) of the ticket's pair
        trades at, from the market the ticket shows."""
        pair_side = self.fields.pair_side
        top = None if pair_side is None else self.market.top(str(pair_side.pair))
        if top is None:
            return None
        return top.bid if side == "sell" else top.ask

    # -- editing --------------------------------------------------------------------------------

    def edit(self, **changes: Any) -> bool:
        """Change the fields (``TicketFields`` names). A change to the order itself (pair,
        side, amount, type, limit) moves a default end time to the setting from now. Nothing
        changes while a confirmation is up (it shows what Send sends). False: ignored.

        The amount keeps its asset: when a side or pair switch (or the units toggle) changes
        the asset it is in, it is converted at the mid or cleared, with a note
        (``app.services.order_amounts``). A limit belongs to its pair: a pair switch re-seeds
        it from the new pair's touch for the side, or clears it, with a note. A limit kept
        through a side or pair switch blocks Send while it is beyond the distance threshold
        from the touch, until the trader edits it."""
        if self.state is TicketState.CONFIRMING:
            return False
        before = self.fields
        fields = replace(before, **changes)
        if fields == before:
            if "limit" in changes and self._limit_switched:
                self._limit_switched = False  # the trader looked at the limit again
                self._publish()
            return True
        order_change = any(name in changes for name in ORDER_FIELDS)
        priced = any(name in changes for name in PRICE_FIELDS)
        if before.marketable and "marketable" not in changes and priced:
            fields = replace(fields, marketable=False)  # the trader's own ticket now
            self._end_touched = False
        notes: list[tuple[str, str]] = []
        fields = self._keep_meaning(before, fields, changes, notes)
        self.fields = fields
        self._note = (notes[0][0], " ".join(text for _, text in notes)) if notes else None
        if "end_at" in changes:
            self._end_touched = True
        if order_change:
            self._rate = None  # a market order's conversion is priced at this edit
            if not fields.marketable:  # hit/lift keeps its end of seconds
                self._default_end()
        if self.state in (TicketState.SETTLED, TicketState.REFUSED, TicketState.UNKNOWN):
            self.state = TicketState.EDITING
        self._publish()
        return True

    def _keep_meaning(
        self,
        before: TicketFields,
        fields: TicketFields,
        changes: Mapping[str, Any],
        notes: list[tuple[str, str]],
    ) -> TicketFields:
        """``fields`` after a switch, meaning what the trader meant: the amount in its asset
        (converted or cleared), a limit of this pair only; ``notes`` get what was done."""
        if fields.pair != before.pair and "amount_asset" not in changes:
            fields = replace(fields, amount_asset=self._units.get(fields.pair, ""))
        if "size" not in changes and fields.amount_in != before.amount_in:
            carried = convert_amount(
                before.size,
                before.amount_in,
                fields.amount_in,
                self.desk.market.tops,
                self.precision,
            )
            fields = replace(fields, size=carried.text)
            notes += [carried.note] if carried.note else []
        if fields.pair != before.pair and before.pair and "limit" not in changes:
            fields = self._reseed(fields, notes)
        if "limit" in changes:
            self._limit_switched = False
        elif fields.side != before.side and fields.pair == before.pair and fields.limit.strip():
            self._limit_switched = True  # (a pair switch re-seeds or clears the limit)
        return fields

    def _reseed(self, fields: TicketFields, notes: list[tuple[str, str]]) -> TicketFields:
        """A new pair's limit: the touch the side trades at, or nothing (never the old pair's
        number)."""
        if not fields.limit.strip():
            return fields
        if fields.order_type != "limit":
            return replace(fields, limit="")
        pair_side = fields.pair_side
        top = None if pair_side is None else self.desk.market.top(str(pair_side.pair))
        what = "ask" if fields.side == "buy" else "bid"
        if pair_side is None or top is None:
            notes.append(("warning", f"Limit cleared: no {what} for {fields.pair} yet."))
            return replace(fields, limit="")
        pair = str(pair_side.pair)
        touch = top.ask if fields.side == "buy" else top.bid
        shown = self.precision.price_text(touch, pair)
        notes.append(("info", f"Limit set to the {pair} {what} {shown} (not carried over)."))
        return replace(fields, limit=plain(touch, self.precision.price(pair)))

    def set_pair(self, pair: str) -> bool:
        return self.edit(pair=pair)

    def set_side(self, side: Side) -> bool:
        return self.edit(side=side)

    def set_size(self, text: str) -> bool:
        return self.edit(size=text)

    def set_type(self, order_type: OrderType) -> bool:
        return self.edit(order_type=order_type)

    def set_limit(self, text: str) -> bool:
        return self.edit(limit=text)

    def set_end(self, end_at: datetime | None) -> bool:
        return self.edit(end_at=end_at)

    def set_end_enabled(self, enabled: bool) -> bool:
        return self.edit(end_enabled=enabled)

    def set_override(self, override: bool) -> bool:
        return self.edit(override=override)

    def set_units(self, asset: str) -> bool:
        """The amount in ``asset`` (the pair's base or quote), remembered for the pair; an
        amount typed is converted at the mid with a note (or cleared)."""
        pair_side = self.fields.pair_side
        if pair_side is None or asset not in (pair_side.pair.base, pair_side.pair.quote):
            return False
        if self.state is TicketState.CONFIRMING:
            return False
        self._units[self.fields.pair] = asset
        return self.edit(amount_asset=asset)

    def toggle_units(self) -> bool:
        """The units button: the amount in the pair's other asset."""
        pair_side = self.fields.pair_side
        if pair_side is None:
            return False
        pair = pair_side.pair
        return self.set_units(pair.quote if self.fields.amount_in == pair.base else pair.base)

    def marketable(
        self, side: Side, amount: Decimal | None, *, collar_bps: Decimal, seconds: float
    ) -> str | None:
        """Hit the bid / lift the offer: a limit at the touch moved ``collar_bps`` against
        the trader (on the pair's tick), ending ``seconds`` from now, so it fills at once or
        expires — it never rests. ``amount`` is of the asset sold (None: the amount typed,
        converted by the usual rule). Returns why nothing was prefilled, or None."""
        if self.state is TicketState.CONFIRMING:
            return "a confirmation is up"
        pair_side = self.fields.pair_side
        if pair_side is None:
            return "Choose a pair to trade first."
        pair = str(pair_side.pair)
        touch = self.touch(side)
        if touch is None:
            return f"No {'bid' if side == 'sell' else 'ask'} for {pair} yet: nothing sent."
        info = self.desk.market.pair_info.get(pair)
        tick = None if info is None else info.price_increment
        places = self.precision.price(pair)
        if tick is None or tick <= 0:
            tick = Decimal(1).scaleb(-places)
        limit = collar_price(touch, side, collar_bps, tick)
        changes: dict[str, Any] = {
            "side": side,
            "order_type": "limit",
            "limit": plain(limit, max(places, decimals_of(tick))),
            "end_enabled": True,
            "end_at": self._now() + timedelta(seconds=seconds),
            "marketable": True,
            "override": False,
        }
        if amount is not None:
            changes.update(
                size=format(amount, "f"), amount_asset=PairSide(pair_side.pair, side).source
            )
        if not self.edit(**changes):
            return "a confirmation is up"
        self._end_touched = False  # the next edit of the order gets the default end again
        self._limit_switched = False
        return None

    def apply(self, presets: Mapping[str, tuple[Decimal, ...]], resting_hours: float) -> None:
        """New settings: size presets and the resting time (a default end moves at once)."""
        self.presets = dict(presets)
        self.resting_hours = resting_hours
        if not self._frozen:  # the end a confirmation shows is the end it sends
            self._default_end()
        self._publish()

    def prefill(
        self, pair: str, side: Side, limit_price: Decimal, amount: Decimal | None = None
    ) -> bool:
        """A limit order to ``side`` ``pair``'s base at ``limit_price`` (QUOTE per BASE), for
        ``amount`` of the asset it sells; without one, the amount already typed when it stays
        in the same asset, else the asset sold's default size, else the amount typed converted
        by the usual rule (``edit``). Digits are never reused for another asset (10,000 USD to
        spend must not become 10,000 BTC to sell). False (nothing changed) while a
        confirmation is up or without a pair."""
        if self.state is TicketState.CONFIRMING or pair.count("/") != 1:
            return False
        target = PairSide(AssetPair.parse(pair), side)
        units = self._units.get(pair, "")
        wanted = replace(self.fields, pair=pair, side=side, amount_asset=units)
        changes: dict[str, Any] = {
            "pair": pair,
            "side": side,
            "order_type": "limit",
            "limit": format(limit_price, "f"),
            "amount_asset": units,
        }
        same_asset = wanted.amount_in == self.fields.amount_in
        if amount is None and not (same_asset and self.fields.size.strip()):
            amount = self.default_size(target.source)
        if amount is not None:  # of the asset sold, for this order
            changes.update(size=format(amount, "f"), amount_asset="")
        return self.edit(**changes)

    def refresh_estimate(self) -> None:
        """A fresh indicative price now (the one shown is stale or missing)."""
        if self._asked is not None:
            self._estimates.refresh(self._asked)

    # -- sending --------------------------------------------------------------------------------

    def submit(self, *, confirm: bool) -> Step:
        """Enter or Send: the current preview is confirmed first (``confirm``) or sent."""
        refused = self._refusal(self.preview)
        if refused is not None:
            return refused
        if confirm:
            self.state = TicketState.CONFIRMING
            self._publish(status_only=True)
            return Step("confirming", preview=self.preview)
        return self._start(self.preview)

    def answer(self, send: bool, shown: Preview) -> Step:
        """The confirmation's answer; ``shown`` is the preview it showed last."""
        if self.state is not TicketState.CONFIRMING:
            return Step("busy")
        self.state = TicketState.EDITING
        self._publish(status_only=True)
        if not send:
            return Step("not_sent", "Not sent.")
        return self.send(shown)

    def send(self, shown: Preview) -> Step:
        """Send exactly ``shown``'s request — only while the current preview sends the same
        request with the same predictions (``Preview.changes_from``): the checks passed to the
        desk are the current preview's, computed on its snapshot. After a change the trader
        must see (another request, a check) nothing is sent: the new preview is
        published for the trader to see first."""
        current = self.preview
        refused = self._refusal(current)
        if refused is not None:
            return refused
        change = current.changes_from(shown)
        if change is not None:
            self._publish(status_only=True)
            return Step(
                "moved",
                f"Not sent: {change}, not what was shown; check it and press Enter again.",
                preview=self.preview,
            )
        return self._start(current)

    def _refusal(self, preview: Preview) -> Step | None:
        if self.state in (TicketState.SENDING, TicketState.CONFIRMING) or preview.busy:
            return Step("busy")
        if preview.blocked is not None:
            message = f"Not sent: {preview.blocked.lower()} ({self._health.reason})."
            return Step("cannot_send", message)
        if preview.intent is None:
            error = preview.error or TicketError("source", "choose a pair to trade")
            return Step("invalid", error.message, error.field)
        if preview.blocks:
            return Step("blocked", "; ".join(check.message for check in preview.blocks))
        return None

    def _start(self, preview: Preview) -> Step:
        ticket, request = preview.ticket, preview.request
        assert ticket is not None and request is not None  # _refusal let it through
        self._last_sent = request.client_order_id
        self._last_ticket = ticket
        self.credit_retry = None
        self.state = TicketState.SENDING
        self._task = asyncio.get_running_loop().create_task(
            self._send(ticket, preview), name=f"send {request.client_order_id}"
        )
        self._publish(status_only=True)
        return Step("sending", f"Sending: {self.desk.describe(ticket)} …", preview=preview)

    async def _send(self, ticket: TicketInput, preview: Preview) -> None:
        request = preview.request
        assert request is not None
        try:
            # The answer reaches the ticket once, through the desk's ``results``.
            await self.desk.send(ticket, request, preview.checks)
        except AlreadySending:
            self._back_to_editing("Not sent: another order is being sent; wait for its answer.")
        except TicketError as exc:
            self._back_to_editing(f"Not sent: {exc.message}")
        except Exception as exc:  # a bug: the desk journaled it as unknown
            if self.state is TicketState.SENDING:
                self.state = TicketState.UNKNOWN
            self._publish(status_only=True)
            self.failures.publish(f"sending the order failed: {exc}")

    def _back_to_editing(self, message: str) -> None:
        self.state = TicketState.EDITING
        self._publish(status_only=True)
        self.failures.publish(message)

    # -- what wakes the ticket ------------------------------------------------------------------

    def _on_result(self, result: SubmitResult) -> None:
        """An answer for the last send, at once or later (an unknown outcome settled)."""
        if result.client_order_id != self._last_sent:
            return
        self.credit_retry = self._credit_retry(result)
        if self.state in ANSWERABLE:  # not over an edit or a confirmation since
            self.state = STATE_OF.get(result.status, TicketState.UNKNOWN)
        self._publish()  # a settled answer gives the next order a new client id
        self.results.publish(result)

    def _credit_retry(self, result: SubmitResult) -> AlgoSpec | None:
        ticket = self._last_ticket
        if result.status != "rejected" or ticket is None or not is_credit_refusal(result.message):
            return None
        session = self.desk.session
        return retry_spec(
            ticket, result.message, session.pair_info, session.client.clock.server_now()
        )

    def _on_market(self, snapshot: MarketSnapshot) -> None:
        if self.state is TicketState.EDITING:
            # Editing follows the touch. A confirmation keeps the touch it shows, and after a
            # send the ticket stays the same order (same client id) until the trader edits:
            # an unknown outcome is never sent again as a new order because the book moved.
            self._rate = None
        pair_side = self.fields.pair_side
        if pair_side is not None and self._asked is not None:
            pair = str(pair_side.pair)
            if snapshot.top(pair) != self.preview.snapshot.top(pair):
                self._estimates.refresh(self._asked)  # the book moved: a fresh price
        self._publish()

    def _on_estimate(self, result: EstimateResult) -> None:
        if self._asked is None or result.ticket != self._asked:
            return  # an answer for an order the trader has since changed
        self._estimate = result
        self._publish()

    def _on_health(self, state: HealthState) -> None:
        self._health = state
        self._publish(status_only=True)

    def _publish(self, *, status_only: bool = False) -> None:
        """A new preview to every subscriber. ``status_only``: only the state, the health or
        the desk's business changed, so the predictions are kept (no market read again)."""
        if status_only:
            self._number += 1
            self.preview = replace(self.preview, number=self._number, **self._status())
        else:
            preview = self._make_preview()
            if preview.fields.override and not preview.fat_finger and not self._frozen:
                # Nothing to override on this market: the next excess asks again. Without a
                # size check the override changes no check, so the preview stands as it is.
                self.fields = replace(self.fields, override=False)
                preview = replace(preview, fields=self.fields)
            self.preview = preview
        self.previews.publish(self.preview)

    @property
    def _frozen(self) -> bool:
        """A confirmation is up: the fields are what it confirms and nothing changes them."""
        return self.state is TicketState.CONFIRMING

    def _on_desk_sending(self, _: bool) -> None:
        """The desk started or ended a send: a new preview only when that changes what the
        ticket shows (another window's send makes this one busy; its own send does not — no
        second repaint between Enter and the request leaving)."""
        status = self._status()
        if any(getattr(self.preview, name) != value for name, value in status.items()):
            self._publish(status_only=True)

    def _status(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "blocked": CANNOT_SEND.get(self._health.health),
            "busy": self.desk.sending and self.state is not TicketState.SENDING,
        }

    def _make_preview(self) -> Preview:
        self._number += 1
        snapshot = self.desk.market
        fields = self.fields
        common = self._status()
        common["note"] = self._note
        pair_side = fields.pair_side
        try:
            ticket, conversion = self._build(fields, snapshot)
        except TicketError as exc:
            if fields.marketable and exc.field == "end_at":
                exc = TicketError(
                    "end_at",
                    "the hit/lift window has passed: press the key again for a fresh price",
                )
            self._asked, self._estimate = None, None
            return Preview(self._number, fields=fields, snapshot=snapshot, error=exc, **common)
        assert pair_side is not None  # a ticket builds only with a pair
        if ticket != self._asked:
            self._asked, self._estimate = ticket, None
            self._estimates.request(ticket)
        intent = OrderIntent.of(ticket, pair_side, self.desk.client_order_id_for(ticket))
        found, what, fills = predict(
            intent,
            snapshot,
            self.desk.limits,
            self._estimate,
            override=fields.override,
            precision=self.precision,
            limit_switched=self._limit_switched,
        )
        return Preview(
            self._number,
            fields=fields,
            snapshot=snapshot,
            intent=intent,
            estimate=self._estimate,
            checks=found,
            what_if=what,
            fills=fills,
            conversion=conversion,
            **common,
        )

    def _build(
        self, fields: TicketFields, snapshot: MarketSnapshot
    ) -> tuple[TicketInput, Conversion | None]:
        """The order the fields mean, with its size in the asset sold, and how an amount in
        the asset bought became that size; TicketError names the field to fix (increments
        included: nothing the service would refuse for its precision is offered)."""
        form = fields.form()
        pair_side = fields.pair_side
        if pair_side is None:
            return form.build(), None  # raises: no pair
        asset, source, pair = fields.amount_in, pair_side.source, pair_side.pair
        conversion = None
        if asset == source:
            ticket = form.build()
            typed = ticket.size
        else:
            probe = replace(form, size="1").build()  # the pair, the limit and the end
            typed = parse_number(fields.size, "size", "an amount")
            if not typed.is_finite() or typed <= 0:
                raise TicketError("size", f"the amount must be greater than zero, not {typed}")
            if probe.limit is not None:
                price, approximate = pair_side.price(probe.limit).value, False
            else:
                price, approximate = self._market_rate(pair_side, snapshot), True
            places = amount_places(source, pair, snapshot.pair_info)
            size = sold_size(typed, pair_side, price, places or self.precision.asset(source))
            if size <= 0:
                raise TicketError("size", f"{typed} {asset} is less than 1 unit of {source}")
            ticket = replace(probe, size=size)
            conversion = Conversion(Amount(typed, asset), Amount(size, source), price, approximate)
        limit = None
        if ticket.limit is not None and ticket.limit.base == pair.base:
            limit = ticket.limit.value
        error = increment_error(typed, asset, limit, pair, snapshot.pair_info)
        if error is not None:
            raise error
        return ticket, conversion

    def _market_rate(self, pair_side: PairSide, snapshot: MarketSnapshot) -> Decimal:
        """The touch a market order's amount in the asset bought is converted at: the latest
        while editing, held while a confirmation is up and after a send (a tick changes
        neither what a confirmation shows nor the order an unknown outcome stands for)."""
        if self._rate is None:
            top = snapshot.top(str(pair_side.pair))
            touch = None if top is None else (top.ask if pair_side.side == "buy" else top.bid)
            if touch is None or touch <= 0:
                what = "ask" if pair_side.side == "buy" else "bid"
                raise TicketError(
                    "size",
                    f"no {what} for {pair_side.pair} yet to turn the amount into "
                    f"{pair_side.source}: wait, or enter it in {pair_side.source}",
                )
            self._rate = touch
        return self._rate

    def _default_end(self) -> None:
        """The end time from the setting, counted from now (the moment the ticket is used),
        to the next whole minute; kept once the trader sets one."""
        if self._end_touched:
            return
        end = self._now() + timedelta(hours=self.resting_hours)
        end = end.replace(second=0, microsecond=0) + timedelta(minutes=1)
        self.fields = replace(self.fields, end_at=end)
