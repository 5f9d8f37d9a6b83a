"""Request for quote: two-way quotes that expire, accepted at most once, inside one transaction.

A quote on ``BASE/QUOTE`` for ``size`` (in BASE or QUOTE) has a ``buy`` side (pay QUOTE, get
BASE) and a ``sell`` side (pay BASE, get QUOTE), priced at the top of book widened by a markup,
each with its own ``expiresAt``. Side prices are written in the pair's convention
(``p BASE/QUOTE``); the accepted order's ``result.price`` is SOURCE/DESTINATION like every order.

Time is read inside the transaction that decides, after the whole request arrived: a quote's
``expiresAt`` counts from when it is recorded, and an accept is judged (and stamped) when its
body is complete, never when its headers came: judged then, a body sent after expiry got 200.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, Decimal, localcontext
from typing import Any

from app.domain import Amount, format_timestamp, utc_now
from app.domain.money import MONEY_CONTEXT, divide, format_trimmed
from app.sandbox.auth import Principal
from app.sandbox.catalogue import ASSETS, PAIRS
from app.sandbox.config import CreditHours
from app.sandbox.funds import book_trade, check_funds
from app.sandbox.market import Market, to_tick
from app.sandbox.orders import OrderEngine
from app.sandbox.pricing import significant
from app.sandbox.store import Store
from app.sandbox.validation import (
    MAX_CLIENT_ORDER_ID,
    optional_string,
    positive_quantity,
    require_object,
    timestamp,
)
from app.sandbox.wire import bad_request, error, ok

MARKUP_BPS = Decimal(5)
SIDES = ("buy", "sell")


class QuoteDesk:
    def __init__(
        self,
        store: Store,
        market: Market,
        credit_hours: CreditHours,
        quote_ttl: float,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._clock = clock
        self._store = store
        self._market = market
        #: Settable while running (the admin route): tests open and close the window on cue.
        self.credit_hours = credit_hours
        self._ttl = timedelta(seconds=quote_ttl)

    def request(
        self, principal: Principal, account_id: str, raw_body: Any, now: datetime
    ) -> dict[str, Any]:
        body = require_object(raw_body)
        pair_name = body.get("assetPair")
        if not isinstance(pair_name, str) or pair_name not in PAIRS:
            raise bad_request(
                f"Unknown assetPair {pair_name!r}; available: {', '.join(sorted(PAIRS))}"
            )
        spec = PAIRS[pair_name]
        base, quote_asset = spec.pair.base, spec.pair.quote
        size_text = body.get("size")
        if not isinstance(size_text, str) or len(size_text.split()) != 2:
            raise bad_request(f"size must look like '0.5 {base}' or '1000 {quote_asset}'")
        size_asset = size_text.split()[1]
        if size_asset not in (base, quote_asset):
            raise bad_request(f"size must be in {base} or {quote_asset}, got {size_asset}")
        size = positive_quantity(size_text, "size", ASSETS[size_asset])
        client_order_id = optional_string(body, "clientOrderId", MAX_CLIENT_ORDER_ID)

        top = self._market.quote(pair_name)
        with localcontext(MONEY_CONTEXT):
            buy_price = to_tick(top.ask * (1 + MARKUP_BPS / 10_000), spec.tick, ROUND_CEILING)
            sell_price = to_tick(top.bid * (1 - MARKUP_BPS / 10_000), spec.tick, ROUND_FLOOR)
            base_q, quote_q = ASSETS[base].quantum, ASSETS[quote_asset].quantum
            if size_asset == base:
                buy = (size * buy_price).quantize(quote_q, ROUND_CEILING), size
                sell = size, (size * sell_price).quantize(quote_q, ROUND_DOWN)
            else:
                buy = size, (size / buy_price).quantize(base_q, ROUND_DOWN)
                sell = (size / sell_price).quantize(base_q, ROUND_CEILING), size
        if min(*buy, *sell) <= 0:
            raise bad_request(f"size {size_text} is too small to quote")
        quote_id = str(uuid.uuid4())
        with self._store.transaction():
            now = max(now, self._clock())
            expires = format_timestamp(now + self._ttl)
            sides = {
                "buy": _side(
                    buy_price, pair_name, Amount(buy[0], quote_asset), Amount(buy[1], base), expires
                ),
                "sell": _side(
                    sell_price,
                    pair_name,
                    Amount(sell[0], base),
                    Amount(sell[1], quote_asset),
                    expires,
                ),
            }
            self._store.insert(
                "quotes",
                {
                    "quote_id": quote_id,
                    "account_id": account_id,
                    "user_id": principal.user_id,
                    "client_order_id": client_order_id,
                    "pair": pair_name,
                    "size": size_text,
                    "created_at": format_timestamp(now),
                    "sides": json.dumps(sides),
                },
            )
        return ok(
            {
                "orderId": quote_id,
                "assetPair": pair_name,
                "size": f"{format_trimmed(size)} {size_asset}",
                **({"clientOrderId": client_order_id} if client_order_id else {}),
                "buy": sides["buy"],
                "sell": sides["sell"],
            }
        )

    def accept(
        self,
        principal: Principal,
        account_id: str,
        quote_id: str,
        raw_body: Any,
        now: datetime,
        orders: OrderEngine,
    ) -> dict[str, Any]:
        """Fill the chosen side if it has not expired; the expiry check, the funds check and
        the booking happen in one transaction."""
        body = require_object(raw_body)
        side = body.get("side")
        if side not in SIDES:
            raise bad_request(f"side must be buy or sell, got {side!r}")
        with self._store.transaction(durable=True):
            now = max(now, self._clock())
            stamp = format_timestamp(now)
            row = self._store.query_one(
                "SELECT * FROM quotes WHERE quote_id = ? AND account_id = ?",
                (quote_id, account_id),
            )
            if row is None:
                raise error(404, f"Quote {quote_id} not found")
            if row["accepted_side"]:
                raise error(409, f"Quote {quote_id} was already accepted ({row['accepted_side']})")
            quoted = json.loads(row["sides"])[side]
            expires_at = timestamp(quoted["expiresAt"], "expiresAt")
            if now >= expires_at:
                raise error(410, f"Quote expired at {quoted['expiresAt']}; request a new quote")
            paid = Amount.parse(quoted["source"], "source")
            received = Amount.parse(quoted["destination"], "destination")
            refusal = check_funds(
                self._store, self.credit_hours, account_id, paid.asset, paid.value, now
            )
            if refusal is not None:
                raise refusal.error(quote_id)
            book_trade(
                self._store,
                account_id=account_id,
                transaction_id=quote_id,
                source=paid.asset,
                size=paid.value,
                destination=received.asset,
                total=received.value,
                event_time=stamp,
            )
            taken = self._store.update(
                "UPDATE quotes SET accepted_side = ? WHERE quote_id = ? AND accepted_side IS NULL",
                (side, quote_id),
            )
            if taken != 1:  # compare-and-set: rolls the booking back
                raise error(409, f"Quote {quote_id} was already accepted")
            pair_price = Decimal(quoted["price"].split()[0])
            base, quote_asset = row["pair"].split("/")
            if side == "sell":
                price = f"{format_trimmed(pair_price)} {base}/{quote_asset}"
                inverted = (
                    f"{format_trimmed(significant(divide(Decimal(1), pair_price)))} "
                    f"{quote_asset}/{base}"
                )
            else:
                price = (
                    f"{format_trimmed(significant(divide(Decimal(1), pair_price)))} "
                    f"{quote_asset}/{base}"
                )
                inverted = f"{format_trimmed(pair_price)} {base}/{quote_asset}"
            self._store.insert(
                "orders",
                {
                    "order_id": quote_id,
                    "account_id": account_id,
                    "user_id": principal.user_id,
                    "email": principal.email,
                    "client_order_id": row["client_order_id"],
                    "type": "rfq",
                    "source": paid.asset,
                    "destination": received.asset,
                    "size": paid.value,
                    "submitted_at": stamp,
                    "updated_at": stamp,
                    "status": "filled",
                    "price": price,
                    "inverted_price": inverted,
                    "total": received.value,
                    "executed_at": stamp,
                },
            )
        return ok({"order": orders.view(orders.get_row(quote_id))})


def _side(
    price: Decimal, pair: str, paid: Amount, received: Amount, expires: str
) -> dict[str, str]:
    return {
        "price": f"{format_trimmed(price)} {pair}",
        "source": f"{format_trimmed(paid.value)} {paid.asset}",
        "destination": f"{format_trimmed(received.value)} {received.asset}",
        "expiresAt": expires,
    }
