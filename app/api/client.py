"""The service client: one method per operation, domain values out, typed errors, safe orders.

Reads (GET) retry on network errors, 5xx and 429 with jittered backoff that honours Retry-After.
Orders and quote accepts are never retried: when their answer is lost (timeout, dropped
connection, 5xx) the client raises ``OutcomeUnknown`` and stops there; finding out what happened
is the settling service's job (``app.services.settling``), live and at start-up.
A 401 triggers one re-login shared by every request waiting on it, then one retry; a 401 that
survives it, a refused re-login, or a 401 less than a minute after the last re-login raises
``LoginExpired`` (the trader logs in again: never a login storm that locks the user out). A 429
on the login raises ``LoginThrottled`` with its Retry-After.

Market-data polls (``poll=True``) get a short deadline (``poll_deadline``: a fraction of a second
above the typical round trip, 1–2 s) and no retries: the feeds' health must see a stall at once.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx

from app.api.auth import Credentials, Password, Token
from app.api.backoff import RetryPolicy, parse_retry_after
from app.api.clock import ServerClock
from app.api.errors import (
    BadResponse,
    LoginExpired,
    LoginThrottled,
    NetworkError,
    NotFound,
    NotSent,
    OutcomeUnknown,
    RateLimited,
    ServerError,
    ServiceError,
    TooLate,
    Unauthorized,
    from_response,
)
from app.api.http import ClientSettings, HttpLayer, Reply, SentRequest
from app.domain import Amount, AssetPair, ParseError, Price, format_decimal, format_timestamp
from app.domain.fields import Fields
from app.domain.order_request import OrderRequest
from app.domain.records import (
    Account,
    DepositRecord,
    Estimate,
    Instruction,
    LedgerEntry,
    Order,
    OrderBook,
    PairInfo,
    Portfolio,
    Quote,
    ServiceInfo,
    TopOfBook,
    parse_instructions,
    parse_top_of_books,
)

log = logging.getLogger("tradeterm.api")
T = TypeVar("T")

#: Where the seed shows two paths, the documented one first, then the usage example's variant.
TOP_OF_BOOK_PATHS = (
    "/api/v1/routing/account/{a}/topofbook",
    "/api/v1/routing/ops/account/{a}/topofbook",
)
#: A re-login after a 401 is tried at most once per this many seconds.
RELOGIN_INTERVAL = 60.0
#: A poll's deadline: this many typical round trips plus a margin, within the bounds below.
POLL_DEADLINE_ROUND_TRIPS = 3.0
POLL_DEADLINE_MARGIN = 0.5
POLL_DEADLINE_MIN = 1.0
POLL_DEADLINE_MAX = 2.0
ORDER_QUERY_PATHS = (
    "/api/v1/routing/order/account/{a}",
    "/api/v1/routing/ops/order/account/{a}/orders",
)


#: Seconds before asking again for a service time the service did not offer (404).
TIME_NOT_OFFERED_RETRY = 300.0


class ServiceClient:
    """A session with the service for one account. Use ``async with`` or call ``aclose``."""

    def __init__(
        self,
        settings: ClientSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        retry: RetryPolicy | None = None,
        clock: ServerClock | None = None,
        rng: random.Random | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        relogin_interval: float = RELOGIN_INTERVAL,
    ) -> None:
        self.settings = settings
        self._monotonic = monotonic  # when re-logins happened (tests inject a clock)
        self._time_asked_again_at: float | None = None  # service time not offered: ask then
        self.relogin_interval = relogin_interval
        self._last_relogin: float | None = None
        self.retry = retry or RetryPolicy()
        self.clock = clock or ServerClock()
        self._rng = rng or random.Random()
        self._http = HttpLayer(settings, transport, on_reply=self._observe)
        self._credentials: Credentials | None = None
        self._token: Token | None = None
        self._login_lock = asyncio.Lock()
        self._variant: dict[tuple[str, ...], str] = {}
        self.logins = 0  # how many times this client logged in (first login and renewals)

    async def __aenter__(self) -> ServiceClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    def watch_requests(self, callback: Callable[[SentRequest], None]) -> Callable[[], None]:
        """Call ``callback`` with each request's method, path and query as it leaves (a
        request log for diagnostics and tests; headers, hence tokens, are not passed).
        Returns a function that stops watching."""
        self._http.watchers.append(callback)
        return lambda: self._http.watchers.remove(callback)

    # -- session ------------------------------------------------------------------------------

    @property
    def account_id(self) -> str:
        if self._credentials is None:
            raise Unauthorized("not logged in")
        return self._credentials.account

    @property
    def token_seconds_left(self) -> float | None:
        return None if self._token is None else self._token.seconds_left()

    async def login(self, user: str, password: Password, account: str) -> None:
        """Log in with the plain password (hashed here, then forgotten) or a hashed one."""
        await self.login_with(Credentials.of(user, password, account))

    async def login_with(self, credentials: Credentials) -> None:
        self._credentials = credentials
        async with self._login_lock:
            await self._login()
        self._last_relogin = None  # the trader logged in: a later 401 may re-login again

    async def logout(self) -> None:
        self._token = None
        self._credentials = None

    async def _login(self) -> None:
        assert self._credentials is not None
        reply = await self._http.send(
            "POST",
            "/api/v1/identity/jwt",
            body={"user": self._credentials.user, "password": self._credentials.digest},
        )
        try:
            body = _checked(reply)
        except RateLimited as exc:
            raise LoginThrottled(
                exc.message, retry_after=exc.retry_after, status=exc.status, messages=exc.messages
            ) from None
        try:
            token = Fields(body, "login").text("token")
        except ParseError as exc:
            raise BadResponse(
                f"login answer without a token ({exc})", status=reply.status, body=body
            ) from None
        self._token = Token.issued(token, server_now=self.clock.server_epoch())
        self.logins += 1

    async def _current_token(self) -> str:
        """A token that is not about to expire; renews it (once, shared) when it is."""
        if self._credentials is None:
            raise Unauthorized("not logged in")
        token = self._token
        if token is None or time.monotonic() >= token.renew_at():
            async with self._login_lock:
                if self._token is token:
                    await self._login()
        assert self._token is not None
        return self._token.value

    async def _relogin_after_401(self, rejected: str, refusal: ServiceError) -> None:
        """One re-login for every request refused with this token, at most one a minute."""
        async with self._login_lock:
            if self._token is not None and self._token.value != rejected:
                return  # another request already logged in again
            now = self._monotonic()
            if self._last_relogin is not None and now - self._last_relogin < self.relogin_interval:
                raise _expired(refusal, "the last re-login was less than a minute ago")
            self._last_relogin = now
            log.info("token refused; logging in again")
            try:
                await self._login()
            except Unauthorized as exc:
                raise _expired(exc, "the service refused the login") from None

    # -- transport with auth, retries and error mapping -------------------------------------

    async def _call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | None] | None = None,
        body: Any = None,
        auth: bool = True,
        headers: Mapping[str, str] | None = None,
        before_send: Callable[[], str | None] | None = None,
        poll: bool = False,
    ) -> Any:
        """Send one request; returns the decoded JSON. GETs retry, except polls (``poll``: a
        short deadline and one try); other methods never do. ``before_send`` is asked right
        before each attempt leaves (also the one after a re-login): a reason refuses it
        locally with ``TooLate`` (nothing sent)."""
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        deadline = self.poll_deadline() if poll else None
        attempt = 0
        relogged = False
        while True:
            attempt += 1
            token = await self._current_token() if auth else None
            if before_send is not None and (late := before_send()) is not None:
                raise TooLate(late)
            try:
                reply = await self._http.send(
                    method,
                    path,
                    params=clean or None,
                    body=body,
                    token=token,
                    headers=headers,
                    deadline=deadline,
                )
                if reply.status == 401 and auth:
                    refusal = _refusal(reply)
                    if relogged:
                        raise _expired(refusal, "refused again after a re-login")
                    relogged = True
                    assert token is not None
                    await self._relogin_after_401(token, refusal)
                    attempt -= 1
                    continue
                return _checked(reply)
            except ServiceError as exc:
                retry_after = getattr(exc, "retry_after", None)
                if method != "GET" or poll or not _retryable(exc):
                    raise
                delay = self.retry.delay(attempt, retry_after, self._rng)
                if delay is None:
                    raise
                log.info("%s %s failed (%s); retry %d in %.2f s", method, path, exc, attempt, delay)
                await asyncio.sleep(delay)

    def poll_deadline(self) -> float:
        """Seconds a market-data poll may take: a fraction of a second above the typical
        round trip, so a stall is seen at once, but never under 1 s nor over 2 s."""
        typical = self.clock.typical_round_trip
        wanted = POLL_DEADLINE_ROUND_TRIPS * typical + POLL_DEADLINE_MARGIN
        return min(POLL_DEADLINE_MAX, max(POLL_DEADLINE_MIN, wanted))

    async def _call_variants(self, paths: tuple[str, ...], **kw: Any) -> Any:
        """Try the documented path, fall back to the variant on 404, remember what worked."""
        account = self.account_id
        known = self._variant.get(paths)
        order = [known, *[p for p in paths if p != known]] if known else list(paths)
        last: NotFound | None = None
        for template in order:
            try:
                result = await self._call("GET", template.format(a=account), **kw)
            except NotFound as exc:
                if exc.status != 404:
                    raise
                last = exc
                continue
            self._variant[paths] = template
            return result
        assert last is not None
        raise last

    def _observe(self, reply: Reply) -> None:
        """Every answer's ``Date`` header refines the server clock (design.md §7)."""
        received = self.clock.monotonic()
        sent = received - reply.elapsed
        date = reply.headers.get("date")
        server = None
        if date:
            try:
                server = parsedate_to_datetime(date)
            except (TypeError, ValueError):
                server = None
        if server is not None and server.tzinfo is not None:
            self.clock.observe_date(server, sent, received)
        else:
            self.clock.observe_round_trip(reply.elapsed)

    # -- service information ------------------------------------------------------------------

    async def info(self, service: str = "routing") -> ServiceInfo:
        return _parse(
            ServiceInfo.parse, await self._call("GET", f"/api/v1/{service}/info", auth=False)
        )

    async def service_time(self) -> datetime:
        """The server's clock; also refines the clock offset estimate (sandbox extension)."""
        sent = self.clock.monotonic()
        body = await self._call("GET", "/api/v1/routing/time", auth=False)
        received = self.clock.monotonic()
        server = _parse(lambda b, w: Fields(b, w).time("time"), body)
        self.clock.observe_time(server, sent, received)
        return server

    async def refresh_clock(self) -> None:
        """Re-measure the server clock when it is due (never measured, a wall-clock jump, a
        moved server clock, or ``remeasure_every`` passed); a failure keeps the estimate from
        the Date headers (logged)."""
        if not self.clock.due():
            return
        now = self._monotonic()
        if self._time_asked_again_at is not None and now < self._time_asked_again_at:
            return
        try:
            await self.service_time()
        except NotFound:
            # An operation the seed names without a path: not offered here. The Date headers
            # keep the clock; it is asked for again only rarely.
            self._time_asked_again_at = now + TIME_NOT_OFFERED_RETRY
            log.info("the service offers no service time; the Date headers keep the clock")
        except ServiceError as exc:
            log.info("service time unavailable (%s); the Date headers keep the clock", exc)
        else:
            self._time_asked_again_at = None

    # -- accounting ---------------------------------------------------------------------------

    async def account(self, *, poll: bool = False) -> Account:
        """The account's balances; ``poll``: a feed's read (short deadline, no retries)."""
        return _parse(
            Account.parse,
            await self._call("GET", f"/api/v1/accounting/account/{self.account_id}", poll=poll),
        )

    async def portfolio(self, *, poll: bool = False) -> Portfolio:
        return _parse(
            Portfolio.parse,
            await self._call(
                "GET", f"/api/v1/accounting/account/{self.account_id}/portfolio", poll=poll
            ),
        )

    async def ledger(
        self,
        max_entries: int,
        *,
        asset: str | None = None,
        event_type: str | None = None,
        transaction_id: str | None = None,
        start_at_ordering: int | None = None,
        start: datetime | None = None,
        end: datetime | None = None,
        ascending: bool | None = None,
    ) -> list[LedgerEntry]:
        params = {
            "max": str(max_entries),
            "asset": asset,
            "type": event_type,
            "transactionId": transaction_id,
            "startAtOrdering": None if start_at_ordering is None else str(start_at_ordering),
            "startTimeUtc": format_timestamp(start) if start else None,
            "endTimeUtc": format_timestamp(end) if end else None,
            "asc": None if ascending is None else _flag(ascending),
        }
        body = await self._call(
            "GET", f"/api/v1/accounting/ledger/{self.account_id}", params=params
        )
        return _parse_list(LedgerEntry.parse, body, "ledger")

    async def deposits(
        self, max_records: int | None = None, *, ascending: bool | None = None
    ) -> list[DepositRecord]:
        return await self._transfers("deposit", "deposits", max_records, ascending)

    async def withdrawals(
        self, max_records: int | None = None, *, ascending: bool | None = None
    ) -> list[DepositRecord]:
        """Withdraw requests (sandbox extension), in the deposit record's shape."""
        return await self._transfers("withdraw", "withdrawals", max_records, ascending)

    async def _transfers(
        self, kind: str, name: str, max_records: int | None, ascending: bool | None
    ) -> list[DepositRecord]:
        params = {
            "max": None if max_records is None else str(max_records),
            "asc": None if ascending is None else _flag(ascending),
        }
        body = await self._call(
            "GET", f"/api/v1/accounting/account/{self.account_id}/request/{kind}", params=params
        )
        return _parse_list(DepositRecord.parse, body, name)

    async def deposit_instructions(self) -> list[Instruction]:
        return _parse(
            parse_instructions,
            await self._call(
                "GET", f"/api/v1/accounting/account/{self.account_id}/request/deposit-instructions"
            ),
        )

    async def withdraw_instructions(self) -> list[Instruction]:
        return _parse(
            parse_instructions,
            await self._call(
                "GET", f"/api/v1/accounting/account/{self.account_id}/request/withdraw-instructions"
            ),
        )

    async def withdraw_blockchain(
        self, amount: Amount, network: str, address: str, *, idempotency_key: str | None = None
    ) -> DepositRecord:
        """Ask to withdraw on a blockchain. Never retried: a lost answer raises OutcomeUnknown
        (``client_order_id`` carries the idempotency key to settle it by)."""
        return await self._withdraw(
            "blockchain",
            {"amount": str(amount), "networkType": network, "address": address},
            idempotency_key,
        )

    async def withdraw_fiat(
        self, amount: Amount, *, idempotency_key: str | None = None
    ) -> DepositRecord:
        """Ask to withdraw by wire; as ``withdraw_blockchain``."""
        return await self._withdraw(
            "fiat", {"amount": str(amount), "method": "wire"}, idempotency_key
        )

    async def _withdraw(self, kind: str, body: dict[str, str], key: str | None) -> DepositRecord:
        """One withdrawal request with an ``Idempotency-Key`` header (the seed shows no
        payload field for one). A server that honours it — the sandbox does — withdraws once
        however often the same key is sent with the same fields, answering the original record
        again, and refuses the key with other fields (409). So an unknown outcome is settled
        by sending the same withdrawal again with the same key: the answer is what happened."""
        key = key or new_idempotency_key()
        path = f"/api/v1/accounting/account/{self.account_id}/request/withdraw/{kind}"
        try:
            answer = await self._call("POST", path, body=body, headers={IDEMPOTENCY_HEADER: key})
        except NotSent:
            raise  # nothing left this machine: nothing was withdrawn
        except (NetworkError, ServerError, BadResponse) as lost:
            log.warning("withdrawal %s: answer lost (%s)", key, lost)
            raise OutcomeUnknown(
                f"the withdrawal's answer was lost ({lost}): unknown whether it was requested "
                "— check the withdrawals before asking again (or resend with the same "
                f"idempotency key {key})",
                client_order_id=key,
            ) from lost
        return _parse(
            lambda b, w: DepositRecord.parse(Fields(b, w).need_obj("withdrawal").raw, "withdrawal"),
            answer,
        )

    # -- market data --------------------------------------------------------------------------

    async def top_of_book(
        self, pairs: list[str] | None = None, *, poll: bool = False
    ) -> dict[str, TopOfBook]:
        params = {"assetPairs": ",".join(pairs)} if pairs else None
        return _parse(
            parse_top_of_books,
            await self._call_variants(TOP_OF_BOOK_PATHS, params=params, poll=poll),
        )

    async def order_book(
        self, pair: str, levels: int | None = None, *, poll: bool = False
    ) -> OrderBook:
        params = {"assetPair": pair, "levels": None if levels is None else str(levels)}
        body = await self._call(
            "GET", f"/api/v1/routing/account/{self.account_id}/book", params=params, poll=poll
        )
        return _parse(lambda b, w: OrderBook.parse(pair, b, w), body)

    async def pairs(self) -> list[PairInfo]:
        body = await self._call("GET", f"/api/v1/routing/account/{self.account_id}/pairs")
        return _parse(lambda b, w: Fields(b, w).array("assetPairs", PairInfo.parse), body)

    async def estimate(self, source: str, destination: str, size: Decimal, quote: str) -> Estimate:
        params = {
            "source": source,
            "destination": destination,
            "size": format_decimal(size),
            "quote": quote,
        }
        return _parse(
            Estimate.parse,
            await self._call(
                "GET", f"/api/v1/routing/account/{self.account_id}/order/estimate", params=params
            ),
        )

    # -- orders -------------------------------------------------------------------------------

    async def place_order(self, request: OrderRequest) -> Order:
        """Send ``request`` exactly as ``request.body`` reads. Never retried: a lost answer
        raises OutcomeUnknown (the settling service finds out what happened), a request that
        provably never left raises NotSent."""
        suffix = "/limit" if request.order_type == "limit" else ""
        path = f"/api/v1/routing/account/{self.account_id}/order{suffix}"
        body = request.body(self.account_id)
        try:
            answer = await self._call("POST", path, body=body)
        except NotSent:
            raise  # nothing left this machine: the order was not placed
        except (NetworkError, ServerError, BadResponse) as lost:
            log.warning("order %s: answer lost (%s)", request.client_order_id, lost)
            raise OutcomeUnknown(
                f"the order's answer was lost ({lost}): unknown whether it executed — check "
                "the blotter before sending it again",
                client_order_id=request.client_order_id,
            ) from lost
        return _parse(lambda b, w: Order.parse(Fields(b, w).need_obj("order").raw, "order"), answer)

    async def limit_order(
        self,
        source: str,
        destination: str,
        size: Decimal,
        *,
        limit: Decimal | None = None,
        end_at: datetime | None = None,
        client_order_id: str | None = None,
    ) -> Order:
        """``place_order`` of a limit order (CLI and tests); ``limit`` is the least destination
        per source accepted (design.md §2)."""
        wire = None if limit is None else Price(limit, source, destination)
        request = OrderRequest(
            "limit",
            source,
            destination,
            size,
            client_order_id or new_client_order_id(),
            wire,
            end_at,
        )
        return await self.place_order(request)

    async def market_order(
        self, source: str, destination: str, size: Decimal, *, client_order_id: str | None = None
    ) -> Order:
        """``place_order`` of a market order (CLI and tests)."""
        request = OrderRequest(
            "market", source, destination, size, client_order_id or new_client_order_id()
        )
        return await self.place_order(request)

    async def request_quote(
        self, pair: str, size: Amount, *, client_order_id: str | None = None
    ) -> Quote:
        AssetPair.parse(pair)
        body = {
            "assetPair": pair,
            "size": str(size),
            "clientOrderId": client_order_id or new_client_order_id(),
        }
        return _parse(
            Quote.parse,
            await self._call(
                "POST", f"/api/v1/routing/account/{self.account_id}/order/rfq", body=body
            ),
        )

    async def accept_quote(
        self, order_id: str, side: str, *, before_send: Callable[[], str | None] | None = None
    ) -> Order:
        """Take one side of a quote. Never retried: a lost answer raises OutcomeUnknown (the
        settling service looks the order up by the quote's id). ``before_send`` is asked at
        the last moment before the POST leaves, again after a re-login: a reason (the quote's
        time is up) raises ``TooLate`` and nothing is sent."""
        path = f"/api/v1/routing/account/{self.account_id}/order/rfq/{order_id}/accept"
        try:
            answer = await self._call("POST", path, body={"side": side}, before_send=before_send)
        except NotSent:
            raise  # nothing left this machine: the quote was not taken
        except (NetworkError, ServerError, BadResponse) as lost:
            log.warning("accept %s: answer lost (%s)", order_id, lost)
            raise OutcomeUnknown(
                f"the accept's answer was lost ({lost}): unknown whether the quote was taken "
                "— check the blotter",
                client_order_id=order_id,
            ) from lost
        return _parse(lambda b, w: Order.parse(Fields(b, w).need_obj("order").raw, "order"), answer)

    async def orders(
        self,
        max_orders: int | None = None,
        *,
        submitted_start: datetime | None = None,
        submitted_end: datetime | None = None,
        source: str | None = None,
        destination: str | None = None,
        order_type: str | None = None,
        status: str | None = None,
        start_at_ordering: int | None = None,
        ascending: bool | None = None,
        client_order_id: str | None = None,
    ) -> list[Order]:
        params = {
            "max": None if max_orders is None else str(max_orders),
            "submittedAtStart": format_timestamp(submitted_start) if submitted_start else None,
            "submittedAtEnd": format_timestamp(submitted_end) if submitted_end else None,
            "source": source,
            "destination": destination,
            "type": order_type,
            "status": status,
            "startAtOrdering": None if start_at_ordering is None else str(start_at_ordering),
            "asc": None if ascending is None else _flag(ascending),
            "clientOrderId": client_order_id,
        }
        body = await self._call_variants(ORDER_QUERY_PATHS, params=params)
        return _parse(lambda b, w: Fields(b, w).array("orders", Order.parse), body)

    async def order(self, order_id: str) -> Order:
        body = await self._call(
            "GET", f"/api/v1/routing/order/account/{self.account_id}/order/{order_id}"
        )
        return _parse(lambda b, w: Order.parse(Fields(b, w).need_obj("order").raw, "order"), body)


def new_client_order_id() -> str:
    return f"tt-{uuid.uuid4().hex}"


#: The header that carries a withdrawal's idempotency key.
IDEMPOTENCY_HEADER = "Idempotency-Key"


def new_idempotency_key() -> str:
    """A fresh key per withdrawal (``clientRequestId`` style)."""
    return f"tt-wd-{uuid.uuid4().hex}"


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _retryable(exc: ServiceError) -> bool:
    if isinstance(exc, LoginThrottled):
        return False  # more logins would only lengthen the lock-out
    return isinstance(exc, NetworkError | ServerError | RateLimited)


def _refusal(reply: Reply) -> ServiceError:
    """The typed error of a 401 answer."""
    try:
        body = reply.json()
    except ValueError:
        body = None
    return from_response(reply.status, body, reply.text, None)


def _expired(refusal: ServiceError, why: str) -> LoginExpired:
    """``LoginExpired`` keeping the server's words (``messages``) and saying why we stopped."""
    return LoginExpired(
        f"login expired: {why}; log in again ({refusal.message})",
        status=401,
        messages=refusal.messages,
        body=refusal.body,
    )


def _checked(reply: Reply) -> Any:
    """The decoded body of a success, or the typed error of a failure."""
    try:
        body = reply.json()
    except ValueError:
        body = None
    if reply.status >= 400:
        raise from_response(
            reply.status, body, reply.text, parse_retry_after(reply.headers.get("retry-after"))
        )
    if body is None:
        snippet = " ".join(reply.text.split())[:120]
        raise BadResponse(
            f"the service answered HTTP {reply.status} with something that is not "
            f"JSON: {snippet!r}",
            status=reply.status,
        )
    return body


#: Whatever reading an answer may raise: each is the same typed error, ``BadResponse`` (an
#: order whose answer could not be read is then unknown and settled, never a traceback).
UNREADABLE = (ParseError, ValueError, TypeError, KeyError, ArithmeticError, RecursionError)


def _parse(parse: Callable[[Any, str], T], body: Any) -> T:
    try:
        return parse(body, "")
    except UNREADABLE as exc:
        raise BadResponse(f"unexpected answer from the service: {exc}", body=body) from None


def _parse_list(parse: Callable[[Any, str], T], body: Any, name: str) -> list[T]:
    if not isinstance(body, list):
        raise BadResponse(f"unexpected answer from the service: {name} is not an array", body=body)
    try:
        return [parse(item, f"{name}[{index}]") for index, item in enumerate(body)]
    except UNREADABLE as exc:
        raise BadResponse(f"unexpected answer from the service: {exc}", body=body) from None
