"""The service's records as immutable values, parsed from decoded JSON (Decimal numbers).

Each ``parse(obj, where)`` is strict about the fields the terminal needs (a missing or mistyped
one raises ParseError naming it) and ignores the rest. Enumerations the server may extend
(order status, eventType, assetType) stay raw strings, never a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Generic, TypeVar

from app.domain.errors import ParseError
from app.domain.fields import Fields
from app.domain.money import Amount, AssetPair, Price, parse_decimal

# -- accounts -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Balance:
    """One asset of Get Account: ``limit`` is zero or negative when credit is granted."""

    asset: str
    free: Decimal
    locked: Decimal
    limit: Decimal
    pending_deposit: Decimal
    available: Decimal

    @classmethod
    def parse(cls, asset: str, obj: object, where: str) -> Balance:
        f = Fields(obj, where)
        return cls(
            asset,
            f.decimal("free"),
            f.decimal("locked"),
            f.decimal("limit"),
            f.decimal("pendingDeposit", required=False),
            f.decimal("available"),
        )


#: Get Account Credit's balance fields, in the order PortfolioBalance holds them.
PORTFOLIO_FIELDS = (
    "availableToTrade",
    "totalFunds",
    "availableFunds",
    "lockedFunds",
    "totalCredit",
    "availableCredit",
    "usedCredit",
)


@dataclass(frozen=True)
class PortfolioBalance:
    """One asset of Get Account Credit."""

    asset: str
    available_to_trade: Decimal
    total_funds: Decimal
    available_funds: Decimal
    locked_funds: Decimal
    total_credit: Decimal
    available_credit: Decimal
    used_credit: Decimal

    @classmethod
    def parse(cls, asset: str, obj: object, where: str) -> PortfolioBalance:
        f = Fields(obj, where)
        return cls(asset, *(f.decimal(name) for name in PORTFOLIO_FIELDS))


B = TypeVar("B")


def _account_parts(
    body: object, where: str, parse_balance: Callable[[str, object, str], B]
) -> tuple[str, str, str, dict[str, B]]:
    """Get Account and Get Account Credit share the wrapper; only the balance fields differ."""
    f = Fields(body, where).need_obj("account")
    balances = f.mapping("balances", lambda value, _: value)
    parsed = {a: parse_balance(a, v, f"{f.where}.balances.{a}") for a, v in balances.items()}
    return (
        f.text("accountId"),
        f.text("type", required=False),
        f.text("name", required=False),
        parsed,
    )


@dataclass(frozen=True)
class Holdings(Generic[B]):
    """An account and its balances per asset: Get Account and Get Account Credit."""

    account_id: str
    type: str
    name: str
    balances: dict[str, B]


@dataclass(frozen=True)
class Account(Holdings[Balance]):
    @classmethod
    def parse(cls, body: object, where: str = "") -> Account:
        return cls(*_account_parts(body, where, Balance.parse))


@dataclass(frozen=True)
class Portfolio(Holdings[PortfolioBalance]):
    @classmethod
    def parse(cls, body: object, where: str = "") -> Portfolio:
        return cls(*_account_parts(body, where, PortfolioBalance.parse))


# -- ledger and transfers -------------------------------------------------------------------


#: In the seed's order; the sandbox filters, and documents, by this table too.
EVENT_TYPES = (
    "invalid",
    "deposit",
    "withdrawal",
    "transferSent",
    "transferReceived",
    "trade",
    "manual",
    "order",
    "initialBalances",
)
KNOWN_EVENT_TYPES = frozenset(EVENT_TYPES)


@dataclass(frozen=True)
class Balances:
    """Both account views, fetched together so they describe the same moment."""

    account: Account
    portfolio: Portfolio


@dataclass(frozen=True)
class LedgerEntry:
    ordering: int
    account_id: str
    transaction_id: str
    asset: str
    amount: Decimal
    event_type: str
    sub_event_type: str
    event_time: datetime
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def parse(cls, obj: object, where: str) -> LedgerEntry:
        f = Fields(obj, where)
        return cls(
            f.integer("ordering"),
            f.text("accountId"),
            f.text("transactionId"),
            f.text("asset"),
            f.decimal("amount"),
            f.text("eventType"),
            f.text("subEventType", required=False),
            f.time("eventTime"),
            f.raw,
        )


@dataclass(frozen=True)
class UserRef:
    id: str
    email: str
    name: str


@dataclass(frozen=True)
class TransferStep:
    """``created`` or ``completed`` of a deposit: when and by whom."""

    at: datetime
    user: UserRef

    @classmethod
    def parse(cls, obj: object, where: str) -> TransferStep:
        f = Fields(obj, where)
        user = f.obj("user", required=False)
        ref = (
            UserRef("", "", "")
            if user is None
            else UserRef(
                user.text("id", required=False),
                user.text("email", required=False),
                user.text("name", required=False),
            )
        )
        return cls(f.time("at"), ref)


@dataclass(frozen=True)
class DepositRecord:
    """A deposit (or, from the sandbox's withdraw query, a withdrawal: ``kind`` tells)."""

    ordering: int
    account_id: str
    transaction_id: str
    asset: str
    amount: Decimal
    status: str
    network: str
    hash: str
    created: TransferStep | None
    completed: TransferStep | None
    kind: str = ""
    method: str = ""
    address: str = ""

    @classmethod
    def parse(cls, obj: object, where: str) -> DepositRecord:
        f = Fields(obj, where)
        created, completed = f.obj("created", required=False), f.obj("completed", required=False)
        return cls(
            f.integer("ordering"),
            f.text("accountId"),
            f.text("transactionId"),
            f.text("asset"),
            f.decimal("amount"),
            f.text("status"),
            f.text("network", required=False),
            f.text("hash", required=False),
            TransferStep.parse(created.raw, created.where) if created else None,
            TransferStep.parse(completed.raw, completed.where) if completed else None,
            f.text("type", required=False),
            f.text("method", required=False),
            f.text("address", required=False),
        )


@dataclass(frozen=True)
class BlockchainInstruction:
    asset: str
    network_type: str
    address: str
    raw: dict[str, Any] = field(compare=False, repr=False)


FIAT_FIELDS = (
    "method",
    "bankName",
    "bankAddress",
    "bankRoutingNumber",
    "bankSwiftNumber",
    "beneficiaryName",
    "beneficiaryAddress",
    "beneficiaryAccountNumber",
    "specialInstructions",
)


@dataclass(frozen=True)
class FiatInstruction:
    asset: str
    #: Every wire field present, in the seed's order, under the seed's names.
    fields: tuple[tuple[str, str], ...]
    raw: dict[str, Any] = field(compare=False, repr=False)

    def get(self, name: str) -> str:
        return dict(self.fields).get(name, "")


@dataclass(frozen=True)
class OtherInstruction:
    """An instruction of an ``assetType`` this version does not know: kept, shown raw."""

    asset: str
    asset_type: str
    raw: dict[str, Any] = field(compare=False, repr=False)


Instruction = BlockchainInstruction | FiatInstruction | OtherInstruction


def parse_instruction(obj: object, where: str) -> Instruction:
    f = Fields(obj, where)
    asset_type = f.text("assetType", required=False)
    if asset_type == "blockchain":
        return BlockchainInstruction(
            f.text("asset"), f.text("networkType"), f.text("address"), f.raw
        )
    if asset_type == "fiat":
        present = tuple((name, f.text(name, required=False)) for name in FIAT_FIELDS if f.has(name))
        return FiatInstruction(f.text("asset"), present, f.raw)
    return OtherInstruction(f.text("asset", required=False), asset_type, f.raw)


def parse_instructions(body: object, where: str = "") -> list[Instruction]:
    return Fields(body, where).array("instructions", parse_instruction)


# -- orders ---------------------------------------------------------------------------------


KNOWN_ORDER_STATUSES = frozenset({"submitted", "filled", "canceled", "rejected"})


@dataclass(frozen=True)
class OrderResult:
    status: str
    price: Price | None
    inverted_price: Price | None
    executed_at: datetime | None
    updated_at: datetime | None
    total: Amount | None
    error: str

    @classmethod
    def parse(cls, obj: object, where: str) -> OrderResult:
        f = Fields(obj, where)
        return cls(
            f.text("status"),
            f.optional_price("price"),
            f.optional_price("invertedPrice"),
            f.optional_time("executedAt"),
            f.optional_time("updatedAt"),
            f.optional_amount("total"),
            f.text("error", required=False),
        )


@dataclass(frozen=True)
class Order:
    order_id: str
    ordering: int | None
    account_id: str
    user_id: str
    email: str
    size: Amount
    source: str
    destination: str
    type: str
    submitted_at: datetime | None
    result: OrderResult
    client_order_id: str = ""
    limit: Price | None = None
    end_at: datetime | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def filled(self) -> bool:
        return self.result.status == "filled"

    @classmethod
    def parse(cls, obj: object, where: str) -> Order:
        f = Fields(obj, where)
        size = f.amount("size")
        source = f.text("source", required=False) or size.asset
        ordering = f.integer("ordering") if f.has("ordering") else None
        return cls(
            f.text("orderId"),
            ordering,
            f.text("accountId", required=False),
            f.text("userId", required=False),
            f.text("email", required=False),
            size,
            source,
            f.text("destination"),
            f.text("type", required=False),
            f.optional_time("submittedAt"),
            OrderResult.parse(f.need_obj("result").raw, f"{f.where}.result"),
            f.text("clientOrderId", required=False),
            f.optional_price("limit"),
            f.optional_time("endAt"),
            f.raw,
        )


@dataclass(frozen=True)
class QuoteSide:
    price: Price
    source: Amount
    destination: Amount
    expires_at: datetime

    @classmethod
    def parse(cls, obj: object, where: str) -> QuoteSide:
        f = Fields(obj, where)
        return cls(
            f.price("price"), f.amount("source"), f.amount("destination"), f.time("expiresAt")
        )


@dataclass(frozen=True)
class Quote:
    order_id: str
    buy: QuoteSide
    sell: QuoteSide
    client_order_id: str = ""

    @classmethod
    def parse(cls, body: object, where: str = "") -> Quote:
        f = Fields(body, where)
        return cls(
            f.text("orderId"),
            QuoteSide.parse(f.need_obj("buy").raw, f"{f.where}.buy" if f.where else "buy"),
            QuoteSide.parse(f.need_obj("sell").raw, f"{f.where}.sell" if f.where else "sell"),
            f.text("clientOrderId", required=False),
        )

    def side(self, name: str) -> QuoteSide:
        if name == "buy":
            return self.buy
        if name == "sell":
            return self.sell
        raise ValueError(f"a quote side is buy or sell, not {name!r}")


@dataclass(frozen=True)
class Estimate:
    source: Amount
    destination: Amount
    price: Price

    @classmethod
    def parse(cls, body: object, where: str = "") -> Estimate:
        f = Fields(body, where)
        return cls(f.amount("source"), f.amount("destination"), f.price("price"))


# -- market data ----------------------------------------------------------------------------


def _level(obj: object, where: str) -> tuple[Decimal, Decimal]:
    if not isinstance(obj, list) or len(obj) < 2:
        raise ParseError(where, "expected [price, size]")
    return parse_decimal(obj[0], f"{where}[0]"), parse_decimal(obj[1], f"{where}[1]")


@dataclass(frozen=True)
class TopOfBook:
    """Best bid and ask of a pair: prices in QUOTE per BASE, sizes in BASE."""

    pair: AssetPair
    bid: Decimal
    bid_size: Decimal
    ask: Decimal
    ask_size: Decimal
    spread: Decimal

    @property
    def mid(self) -> Decimal:
        return (self.bid + self.ask) / 2

    @classmethod
    def parse(cls, pair: str, obj: object, where: str) -> TopOfBook:
        f = Fields(obj, where)
        bid, bid_size = _level(f.raw.get("bid"), f"{where}.bid")
        ask, ask_size = _level(f.raw.get("ask"), f"{where}.ask")
        spread = f.optional_decimal("spread")
        return cls(
            AssetPair.parse(pair, where),
            bid,
            bid_size,
            ask,
            ask_size,
            ask - bid if spread is None else spread,
        )


def parse_top_of_books(body: object, where: str = "") -> dict[str, TopOfBook]:
    f = Fields(body, where)
    books = f.mapping("topOfBooks", lambda v, w: (v, w))
    return {pair: TopOfBook.parse(pair, value, path) for pair, (value, path) in books.items()}


@dataclass(frozen=True)
class OrderBook:
    pair: AssetPair
    bids: tuple[tuple[Decimal, Decimal], ...]
    asks: tuple[tuple[Decimal, Decimal], ...]

    @classmethod
    def parse(cls, pair: str, body: object, where: str = "") -> OrderBook:
        f = Fields(body, where)
        return cls(
            AssetPair.parse(f.text("assetPair", required=False) or pair, where),
            tuple(f.array("bids", _level)),
            tuple(f.array("asks", _level)),
        )


@dataclass(frozen=True)
class PairInfo:
    pair: AssetPair
    price_increment: Decimal | None
    base_decimals: int | None
    quote_decimals: int | None

    @classmethod
    def parse(cls, obj: object, where: str) -> PairInfo:
        if isinstance(obj, str):
            return cls(AssetPair.parse(obj, where), None, None, None)
        f = Fields(obj, where)
        return cls(
            AssetPair.parse(f.text("assetPair"), f"{where}.assetPair"),
            f.optional_decimal("priceIncrement"),
            f.integer("baseDecimals") if f.has("baseDecimals") else None,
            f.integer("quoteDecimals") if f.has("quoteDecimals") else None,
        )


# -- service --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServiceInfo:
    service: str
    application: str
    instance: str
    launched_at: datetime | None
    version: str
    commit: str
    branch: str
    built_at: datetime | None

    @classmethod
    def parse(cls, body: object, where: str = "") -> ServiceInfo:
        f = Fields(body, where).need_obj("info")
        build = f.obj("build", required=False)
        return cls(
            f.text("service", required=False),
            f.text("application", required=False),
            f.text("instance", required=False),
            f.optional_time("applicationLaunchTime"),
            build.text("version", required=False) if build else "",
            build.text("commit", required=False) if build else "",
            build.text("branch", required=False) if build else "",
            build.optional_time("iso8601") if build else None,
        )
