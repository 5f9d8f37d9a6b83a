"""Readable renderings of each record, for a trader at a terminal (``--json`` is for scripts).

Tables for lists, key/value blocks for single records. Orders, fills, trades and prices are in
the trader's terms (design.md §8): Buy or Sell of a pair's base, prices in QUOTE per BASE at the
pair's price increment with thousands separators, amounts exact at the asset's precision — all
through ``app.domain.display`` with the precision ``PairTerms`` learned from the service's
pairs. Balances read as the terminal's balances table (credit limit, used and available
credit) with the same precision; the other records print the service's exact digits. Every
table groups thousands and aligns a column's numbers on the decimal point (app.cli.output).
A fill's price is its average fill price (``app.domain.fill_price``), labelled so, the one the
terminal's ticket, orders table, ledger and notices show; the service's rate is in ``--json``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import TypeVar

from app.cli.output import TextColumn, blocks, fields, table
from app.domain.balance_rows import merge_row
from app.domain.display import ASSET_DECIMALS, DASH, DEFAULT_DECIMALS, Precision
from app.domain.fill_price import FillPrice
from app.domain.money import AssetPair
from app.domain.order_terms import OrderTerms
from app.domain.pair_terms import PairSide, Trade
from app.domain.records import (
    Account,
    Balance,
    BlockchainInstruction,
    DepositRecord,
    Estimate,
    FiatInstruction,
    Holdings,
    Instruction,
    LedgerEntry,
    Order,
    OrderBook,
    PairInfo,
    Portfolio,
    PortfolioBalance,
    Quote,
    ServiceInfo,
    TopOfBook,
)
from app.services.ledger_browser import group_rows
from app.services.ledger_pages import LedgerOrder
from app.services.order_feed import status_word

N = True  # numeric column marker, for short column lists
B = TypeVar("B")


@dataclass
class OwnDigits(Precision):
    """Precision for the command line: the service's decimals where its pairs give them; else
    an amount shows its own digits (nothing added, nothing rounded) and a price the
    conventional decimals of its quote asset."""

    assets: dict[str, int] = field(default_factory=dict)

    def asset(self, code: str) -> int:
        return self.assets.get(code, 0)

    def price(self, pair: str) -> int:
        if pair in self.prices:
            return self.prices[pair]
        quote = pair.split("/")[-1]
        return max(self.assets.get(quote, ASSET_DECIMALS.get(quote, DEFAULT_DECIMALS)), 2)


@dataclass(frozen=True)
class PairTerms:
    """What the views need to speak in pair terms: the precision and the pairs' names."""

    precision: Precision = field(default_factory=OwnDigits)
    pairs: tuple[str, ...] = ()

    @classmethod
    def learned(cls, infos: Iterable[PairInfo]) -> PairTerms:
        """From the service's pairs (an empty list: every amount with its own digits)."""
        listed = {str(info.pair): info for info in infos}
        precision = OwnDigits()
        precision.learn(listed)
        return cls(precision, tuple(listed))

    def amount(self, value: Decimal | None, asset: str) -> str | None:
        """``0.11001837 BTC`` (None stays None: the field is left out)."""
        return None if value is None else f"{self.precision.exact(value, asset)} {asset}"

    def number(self, value: Decimal | None, asset: str) -> str:
        return DASH if value is None else self.precision.exact(value, asset)

    def price(self, value: Decimal | None, pair: AssetPair) -> str:
        """A price in QUOTE per BASE of ``pair``: ``90,893.91``."""
        return DASH if value is None else self.precision.price_text(value, str(pair))

    def fill_words(self, fill: FillPrice) -> str:
        """A fill's price as every screen shows it: ``90,893.91 USD per BTC``."""
        return f"{fill.words(self.precision)} per {fill.pair.base}"

    def price_words(self, value: Decimal | None, pair: AssetPair) -> str | None:
        """``90,893.91 USD per BTC``."""
        if value is None:
            return None
        return f"{self.price(value, pair)} {pair.quote} per {pair.base}"


def _cols(*spec: tuple[str, bool]) -> list[TextColumn]:
    return [TextColumn(header, numeric) for header, numeric in spec]


def _holdings(
    value: Holdings[B],
    terms: PairTerms,
    headers: tuple[str, ...],
    amounts: Callable[[str, B], tuple[Decimal, ...]],
) -> str:
    """The account's head, then a table of its assets: ``amounts`` gives an asset's numbers
    under ``headers``, each exact at the asset's precision."""
    columns = _cols(("ASSET", False), *((header, N) for header in headers))
    rows = [
        [asset, *(terms.number(amount, asset) for amount in amounts(asset, balance))]
        for asset, balance in sorted(value.balances.items())
    ]
    head = fields(
        [("Account", value.account_id), ("Type", value.type or None), ("Name", value.name or None)]
    )
    return blocks(head, table(columns, rows))


def account(value: Account, terms: PairTerms | None = None) -> str:
    """Balances as the terminal's balances table shows them (app.domain.balance_rows): the
    credit limit a positive amount (the wire's ``limit`` -250000 reads 250,000.00), then the
    credit used and still available; amounts exact at the asset's precision."""

    def amounts(asset: str, balance: Balance) -> tuple[Decimal, ...]:
        row = merge_row(asset, balance, None)
        return (
            row.free,
            row.locked,
            row.available,
            row.credit_limit,
            row.used_credit,
            row.available_credit,
            row.pending_deposit,
        )

    headers = (
        "FREE",
        "LOCKED",
        "AVAILABLE",
        "CREDIT LIMIT",
        "USED CREDIT",
        "AVAILABLE CREDIT",
        "PENDING DEPOSIT",
    )
    return _holdings(value, terms or PairTerms(), headers, amounts)


def portfolio(value: Portfolio, terms: PairTerms | None = None) -> str:
    """Funds and credit per asset, credit in the terminal's words (the service's
    ``totalCredit`` is the credit limit)."""

    def amounts(_: str, b: PortfolioBalance) -> tuple[Decimal, ...]:
        return (
            b.available_to_trade,
            b.total_funds,
            b.available_funds,
            b.locked_funds,
            b.total_credit,
            b.used_credit,
            b.available_credit,
        )

    headers = (
        "AVAILABLE TO TRADE",
        "TOTAL FUNDS",
        "AVAILABLE FUNDS",
        "LOCKED FUNDS",
        "CREDIT LIMIT",
        "USED CREDIT",
        "AVAILABLE CREDIT",
    )
    return _holdings(value, terms or PairTerms(), headers, amounts)


def ledger_note(entries: list[LedgerEntry], order: LedgerOrder) -> str:
    """How many entries, in which order: ``Ledger: 300 entries, newest first``."""
    count = f"{len(entries):,} {'entry' if len(entries) == 1 else 'entries'}"
    return f"Ledger: {count}, {order.value}"


def ledger(entries: list[LedgerEntry], terms: PairTerms | None = None) -> str:
    """Entries in the order given (``ledger_note`` says which); a trade's two legs say what
    they did together (``Buy BTC/USD``) and at what price (QUOTE per BASE); amounts exact at
    the asset's precision."""
    terms = terms or PairTerms()
    columns = _cols(
        ("ORDERING", N),
        ("TIME", False),
        ("TYPE", False),
        ("ASSET", False),
        ("AMOUNT", N),
        ("TRADE", False),
        ("AVG FILL PRICE", N),
        ("TRANSACTION", False),
    )
    rows = []
    for row in group_rows(entries, None, terms.pairs):
        e, trade = row.entry, row.trade
        amount = terms.number(e.amount, e.asset)
        rows.append(
            [
                e.ordering,
                e.event_time,
                f"{e.event_type}/{e.sub_event_type}" if e.sub_event_type else e.event_type,
                e.asset,
                f"+{amount}" if e.amount > 0 else amount,
                "" if trade is None else str(trade.pair_side),
                "" if trade is None else trade.fill_price.text(terms.precision),
                e.transaction_id,
            ]
        )
    return table(columns, rows)


def deposits(records: list[DepositRecord]) -> str:
    columns = _cols(
        ("ORDERING", N),
        ("CREATED", False),
        ("ASSET", False),
        ("AMOUNT", N),
        ("STATUS", False),
        ("NETWORK", False),
        ("HASH", False),
    )
    rows = [
        [
            r.ordering,
            r.created.at if r.created else None,
            r.asset,
            r.amount,
            r.status,
            r.network or r.method,
            r.hash,
        ]
        for r in records
    ]
    return table(columns, rows)


def instructions(values: list[Instruction]) -> str:
    chains = [v for v in values if isinstance(v, BlockchainInstruction)]
    columns = _cols(("ASSET", False), ("NETWORK", False), ("ADDRESS", False))
    parts = [table(columns, [[v.asset, v.network_type, v.address] for v in chains])]
    for value in values:
        if isinstance(value, FiatInstruction):
            labelled = [(_label(name), text) for name, text in value.fields]
            parts.append(fields([("Asset", f"{value.asset} (fiat)"), *labelled]))
        elif not isinstance(value, BlockchainInstruction):
            shown = [(str(k), v) for k, v in value.raw.items()]
            parts.append(fields(shown))
    return blocks(*parts)


def _label(name: str) -> str:
    """``bankSwiftNumber`` -> ``Bank swift number``."""
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()
    return words[:1].upper() + words[1:]


def top_of_books(books: dict[str, TopOfBook], terms: PairTerms | None = None) -> str:
    """Prices in QUOTE per BASE at the pair's increment, sizes exact in the base."""
    terms = terms or PairTerms()
    columns = _cols(
        ("PAIR", False),
        ("BID SIZE", N),
        ("BID", N),
        ("ASK", N),
        ("ASK SIZE", N),
        ("SPREAD", N),
    )
    rows = []
    for name, b in books.items():
        pair = AssetPair.parse(name)
        rows.append(
            [
                name,
                terms.number(b.bid_size, pair.base),
                terms.price(b.bid, pair),
                terms.price(b.ask, pair),
                terms.number(b.ask_size, pair.base),
                terms.price(b.spread, pair),
            ]
        )
    return table(columns, rows)


def order_book(book: OrderBook, terms: PairTerms | None = None) -> str:
    terms = terms or PairTerms()
    pair = book.pair
    columns = _cols(("LEVEL", N), ("BID SIZE", N), ("BID", N), ("ASK", N), ("ASK SIZE", N))
    depth = max(len(book.bids), len(book.asks))
    rows: list[list[object]] = []
    for index in range(depth):
        bid = book.bids[index] if index < len(book.bids) else (None, None)
        ask = book.asks[index] if index < len(book.asks) else (None, None)
        rows.append(
            [
                f"{index + 1:,}",
                "" if bid[1] is None else terms.number(bid[1], pair.base),
                "" if bid[0] is None else terms.price(bid[0], pair),
                "" if ask[0] is None else terms.price(ask[0], pair),
                "" if ask[1] is None else terms.number(ask[1], pair.base),
            ]
        )
    return blocks(
        f"Order book {pair} (prices in {pair.quote} per {pair.base})", table(columns, rows)
    )


def pairs(values: list[PairInfo]) -> str:
    columns = _cols(
        ("PAIR", False), ("PRICE INCREMENT", N), ("BASE DECIMALS", N), ("QUOTE DECIMALS", N)
    )
    rows = [[p.pair, p.price_increment, p.base_decimals, p.quote_decimals] for p in values]
    return table(columns, rows)


def estimate(value: Estimate, terms: PairTerms | None = None) -> str:
    """What selling the source would give, and the indicative price in QUOTE per BASE of the
    pair (whichever asset the ``quote`` parameter named)."""
    terms = terms or PairTerms()
    source, destination = value.source, value.destination
    pair_side = PairSide.of(source.asset, destination.asset, terms.pairs)
    try:
        price: object = terms.price_words(pair_side.price(value.price).value, pair_side.pair)
    except (ValueError, ZeroDivisionError):  # not a price between the two assets: as sent
        price = value.price
    return fields(
        [
            ("Side", str(pair_side)),
            ("Sell", terms.amount(source.value, source.asset)),
            ("Receive", terms.amount(destination.value, destination.asset)),
            ("Price", price),
        ]
    )


def order(value: Order, terms: PairTerms | None = None) -> str:
    """One order in pair terms; the fill in words. The wire's view is ``--json``."""
    terms = terms or PairTerms()
    result = value.result
    said = OrderTerms.of(value, terms.pairs)
    pair_side = said.pair_side
    pair = pair_side.pair
    trade = Trade.of(value, terms.pairs)
    fill = said.fill
    return fields(
        [
            ("Order", value.order_id),
            ("Status", status_word(result.status)),
            ("Type", value.type or None),
            ("Side", str(pair_side)),
            ("Amount", terms.amount(said.base, pair.base)),
            (
                "Price" if fill is None else fill.label.capitalize(),
                None if fill is None else terms.fill_words(fill),
            ),
            ("Notional", terms.amount(said.quote, pair.quote)),
            ("Limit", terms.price_words(said.limit, pair)),
            ("Fill", None if trade is None else trade.sentence(terms.precision)),
            ("End at", value.end_at),
            ("Submitted at", value.submitted_at),
            ("Executed at", result.executed_at),
            ("Updated at", result.updated_at),
            ("Client order id", value.client_order_id or None),
            ("Error", result.error or None),
        ]
    )


def orders(values: list[Order], terms: PairTerms | None = None) -> str:
    """Orders in pair terms: Buy/Sell of the base, Amount of the base, Price and Limit in
    QUOTE per BASE, Notional in the quote."""
    terms = terms or PairTerms()
    columns = _cols(
        ("SUBMITTED", False),
        ("ORDER", False),
        ("TYPE", False),
        ("PAIR", False),
        ("SIDE", False),
        ("AMOUNT", N),
        ("AVG FILL PRICE", N),
        ("NOTIONAL", N),
        ("STATUS", False),
        ("LIMIT", N),
        ("END", False),
    )
    rows = []
    for o in values:
        said = OrderTerms.of(o, terms.pairs)
        pair = said.pair_side.pair
        rows.append(
            [
                o.submitted_at,
                o.order_id,
                o.type,
                str(pair),
                said.pair_side.verb,
                terms.number(said.base, pair.base),
                DASH if said.fill is None else said.fill.text(terms.precision),
                terms.number(said.quote, pair.quote),
                status_word(o.result.status),
                terms.price(said.limit, pair),
                o.end_at,
            ]
        )
    return table(columns, rows)


def quote(value: Quote, pair_name: str, terms: PairTerms | None = None) -> str:
    """Both sides of a quote: Buy and Sell of the base, prices in QUOTE per BASE."""
    terms = terms or PairTerms()
    pair = AssetPair.parse(pair_name)
    columns = _cols(
        ("SIDE", False), ("PRICE", N), ("PAY", N), ("RECEIVE", N), ("EXPIRES AT", False)
    )
    rows = []
    for side in ("buy", "sell"):
        offer = value.buy if side == "buy" else value.sell
        try:
            price = terms.price(PairSide(pair, side).price(offer.price).value, pair)
        except ValueError:  # a price in other assets than the pair's: as the service wrote it
            price = str(offer.price)
        rows.append(
            [
                f"{'Buy' if side == 'buy' else 'Sell'} {pair}",
                price,
                terms.amount(offer.source.value, offer.source.asset),
                terms.amount(offer.destination.value, offer.destination.asset),
                offer.expires_at,
            ]
        )
    head = fields([("Quote", value.order_id), ("Client order id", value.client_order_id or None)])
    hint = f"Accept with: tradeterm api accept {value.order_id} --side buy|sell"
    return blocks(head, table(columns, rows), hint)


def service_info(value: ServiceInfo) -> str:
    return fields(
        [
            ("Service", value.service),
            ("Application", value.application),
            ("Instance", value.instance),
            ("Launched at", value.launched_at),
            ("Version", value.version),
            ("Commit", value.commit),
            ("Branch", value.branch),
            ("Built at", value.built_at),
        ]
    )


def service_time(value: datetime) -> str:
    return fields([("Server time", value)])
