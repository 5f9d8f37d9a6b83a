"""Wire records: every parser returns a value or raises ParseError, for any JSON whatsoever;
strict about what the terminal needs, tolerant of everything else."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.domain import Amount, ParseError, Price
from app.domain.records import (
    Account,
    BlockchainInstruction,
    DepositRecord,
    Estimate,
    FiatInstruction,
    LedgerEntry,
    Order,
    OrderBook,
    OtherInstruction,
    PairInfo,
    Portfolio,
    Quote,
    ServiceInfo,
    parse_instruction,
    parse_instructions,
    parse_top_of_books,
)

STAMP = "2026-01-02T03:04:05.123456Z"
USER = {"id": "u-1", "email": "u@example.com", "name": "U"}

#: A valid example of each record, with the real field names (sandbox and seed shapes).
VALID: dict[str, Any] = {
    "account": {
        "account": {
            "accountId": "acct-1",
            "type": "client",
            "name": "Acct",
            "balances": {
                "USD": {
                    "free": Decimal("100.5"),
                    "locked": 0,
                    "limit": Decimal("-50000"),
                    "pendingDeposit": 0,
                    "available": Decimal("50100.5"),
                }
            },
        },
        "status": "ok",
        "httpStatusCode": 200,
    },
    "portfolio": {
        "account": {
            "accountId": "acct-1",
            "type": "client",
            "name": "Acct",
            "balances": {
                "BTC": {
                    "availableToTrade": Decimal("2"),
                    "totalFunds": Decimal("2"),
                    "availableFunds": Decimal("2"),
                    "lockedFunds": 0,
                    "totalCredit": 0,
                    "availableCredit": 0,
                    "usedCredit": 0,
                }
            },
        }
    },
    "ledger": {
        "ordering": 17,
        "accountId": "acct-1",
        "transactionId": "tx-1",
        "asset": "BTC",
        "amount": Decimal("-0.01"),
        "eventType": "trade",
        "subEventType": "source",
        "eventTime": STAMP,
    },
    "deposit": {
        "ordering": 3,
        "accountId": "acct-1",
        "transactionId": "tx-2",
        "asset": "USDT",
        "amount": Decimal("250"),
        "status": "completed",
        "network": "tron",
        "hash": "ab" * 32,
        "created": {"at": STAMP, "user": USER},
        "completed": {"at": STAMP, "user": USER},
    },
    "instruction_chain": {
        "asset": "BTC",
        "assetType": "blockchain",
        "networkType": "bitcoin",
        "address": "bc1-address",
    },
    "instruction_fiat": {
        "asset": "USD",
        "assetType": "fiat",
        "method": "wire",
        "bankName": "Bank",
        "bankAddress": "Street 1",
        "bankRoutingNumber": "021000021",
        "bankSwiftNumber": "SBOXUS33",
        "beneficiaryName": "Custody LLC",
        "beneficiaryAddress": "Street 2",
        "beneficiaryAccountNumber": "000123",
        "specialInstructions": "Reference acct-1",
    },
    "order": {
        "orderId": "o-1",
        "ordering": 9,
        "accountId": "acct-1",
        "userId": "",
        "email": "u@example.com",
        "size": "0.5 BTC",
        "source": "BTC",
        "destination": "USD",
        "type": "limit",
        "submittedAt": STAMP,
        "clientOrderId": "c-1",
        "limit": "59000 BTC/USD",
        "endAt": STAMP,
        "result": {
            "status": "filled",
            "price": "60000 BTC/USD",
            "invertedPrice": "0.0000166666 USD/BTC",
            "executedAt": STAMP,
            "updatedAt": STAMP,
            "total": "30000 USD",
            "error": "",
        },
    },
    "quote": {
        "orderId": "q-1",
        "clientOrderId": "c-2",
        "buy": {
            "price": "60030 BTC/USD",
            "source": "600.3 USD",
            "destination": "0.01 BTC",
            "expiresAt": STAMP,
        },
        "sell": {
            "price": "59970 BTC/USD",
            "source": "0.01 BTC",
            "destination": "599.7 USD",
            "expiresAt": STAMP,
        },
        "status": "ok",
        "httpStatusCode": 200,
    },
    "estimate": {"source": "0.01 BTC", "destination": "600 USD", "price": "60000 BTC/USD"},
    "top_of_books": {
        "topOfBooks": {
            "BTC/USD": {
                "spread": Decimal("10"),
                "ask": [Decimal("60005"), Decimal("1.5")],
                "bid": [Decimal("59995"), 2],
            }
        }
    },
    "order_book": {
        "assetPair": "BTC/USD",
        "bids": [[Decimal("59995"), 1], [Decimal("59990"), 2]],
        "asks": [[Decimal("60005"), 1]],
    },
    "pair": {
        "assetPair": "BTC/USD",
        "priceIncrement": Decimal("0.01"),
        "baseDecimals": 8,
        "quoteDecimals": 2,
    },
    "info": {
        "info": {
            "service": "routing",
            "application": "tradeterm-sandbox",
            "instance": "i-1",
            "applicationLaunchTime": STAMP,
            "build": {
                "version": "0.1.0",
                "commit": "abc",
                "branch": "main",
                "iso8601": STAMP,
                "unixSeconds": 1767323045,
            },
        }
    },
}

PARSERS: dict[str, Callable[[Any], object]] = {
    "account": lambda b: Account.parse(b, ""),
    "portfolio": lambda b: Portfolio.parse(b, ""),
    "ledger": lambda b: LedgerEntry.parse(b, "ledger[0]"),
    "deposit": lambda b: DepositRecord.parse(b, "deposits[0]"),
    "instruction_chain": lambda b: parse_instruction(b, "instructions[0]"),
    "instruction_fiat": lambda b: parse_instruction(b, "instructions[0]"),
    "order": lambda b: Order.parse(b, "order"),
    "quote": lambda b: Quote.parse(b, ""),
    "estimate": lambda b: Estimate.parse(b, ""),
    "top_of_books": lambda b: parse_top_of_books(b, ""),
    "order_book": lambda b: OrderBook.parse("BTC/USD", b, ""),
    "pair": lambda b: PairInfo.parse(b, "assetPairs[0]"),
    "info": lambda b: ServiceInfo.parse(b, ""),
}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.decimals(),  # NaN, sNaN, infinities and huge exponents included
    st.floats(),  # a float never comes from our decoding, but must not crash a parser
    st.text(max_size=30),
    st.sampled_from(["", "0.5 BTC", "1e3", "1 BTC/USD", "BTC/USD", STAMP, "2026-13-45T99:00Z"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=10), children, max_size=4),
    ),
    max_leaves=12,
)
#: Cheaper arbitrary values for the leaves of a mutated record.
junk = st.one_of(
    scalars,
    st.lists(scalars, max_size=3),
    st.dictionaries(st.text(max_size=5), scalars, max_size=3),
)


def mutated(value: Any) -> st.SearchStrategy[Any]:
    """``value`` with any field kept, dropped or replaced by arbitrary JSON, recursively."""
    if isinstance(value, dict):
        fields = {key: mutated(item) for key, item in value.items()}
        return st.one_of(
            junk,
            st.fixed_dictionaries(fields),
            st.fixed_dictionaries({}, optional=fields),
        )
    if isinstance(value, list):
        return st.one_of(junk, st.lists(st.one_of(*[mutated(v) for v in value]), max_size=3))
    return st.one_of(st.just(value), junk)


MUTATED = {name: mutated(example) for name, example in VALID.items()}


def _returns_or_parse_error(name: str, value: Any) -> None:
    try:
        PARSERS[name](value)
    except ParseError as exc:
        message = str(exc)  # a message a trader can read
        assert message


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_valid_examples_parse(name: str) -> None:
    assert PARSERS[name](copy.deepcopy(VALID[name])) is not None


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PARSERS))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_json_parses_or_raises_parse_error(name: str, data: st.DataObject) -> None:
    _returns_or_parse_error(name, data.draw(json_values))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PARSERS))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_real_field_names_with_any_values_parse_or_raise_parse_error(
    name: str, data: st.DataObject
) -> None:
    _returns_or_parse_error(name, data.draw(MUTATED[name]))


# -- tolerance --------------------------------------------------------------------------------


def test_unknown_fields_are_ignored() -> None:
    plain = Order.parse(copy.deepcopy(VALID["order"]), "order")
    extended = copy.deepcopy(VALID["order"])
    extended["venue"] = {"name": "x", "fees": [1, 2]}
    extended["result"]["fills"] = [{"price": "1"}]
    assert Order.parse(extended, "order") == plain

    body = copy.deepcopy(VALID["account"])
    body["account"]["balances"]["USD"]["reserved"] = "whatever"
    body["meta"] = None
    assert Account.parse(body) == Account.parse(copy.deepcopy(VALID["account"]))


def test_unknown_enumeration_values_are_kept_raw() -> None:
    order = copy.deepcopy(VALID["order"])
    order["result"]["status"] = "partiallyFilled"
    order["type"] = "iceberg"
    parsed = Order.parse(order, "order")
    assert parsed.result.status == "partiallyFilled" and not parsed.filled
    assert parsed.type == "iceberg"

    entry = copy.deepcopy(VALID["ledger"])
    entry["eventType"] = "rebate"
    entry["subEventType"] = "fee"
    ledger = LedgerEntry.parse(entry, "ledger[0]")
    assert (ledger.event_type, ledger.sub_event_type) == ("rebate", "fee")

    deposit = copy.deepcopy(VALID["deposit"])
    deposit["status"] = "awaitingConfirmations"
    assert DepositRecord.parse(deposit, "d").status == "awaitingConfirmations"

    raw = {"asset": "BTC", "assetType": "lightning", "invoice": "lnbc1..."}
    other = parse_instruction(raw, "instructions[0]")
    assert isinstance(other, OtherInstruction)
    assert (other.asset, other.asset_type, other.raw) == ("BTC", "lightning", raw)
    untyped = parse_instruction({"asset": "ETH"}, "instructions[1]")
    assert isinstance(untyped, OtherInstruction) and untyped.asset_type == ""

    mixed = parse_instructions(
        {"instructions": [VALID["instruction_chain"], VALID["instruction_fiat"], raw]}
    )
    assert [type(i) for i in mixed] == [BlockchainInstruction, FiatInstruction, OtherInstruction]
    fiat = mixed[1]
    assert isinstance(fiat, FiatInstruction)
    assert fiat.get("bankSwiftNumber") == "SBOXUS33" and fiat.get("missing") == ""
    assert [name for name, _ in fiat.fields][:2] == ["method", "bankName"]


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        (5, Decimal(5)),
        (Decimal("100.25"), Decimal("100.25")),
        ("100.25", Decimal("100.25")),
        ("1e2", Decimal(100)),
        ("1.5E-3", Decimal("0.0015")),
        (" -7 ", Decimal(-7)),
        ("0.000000000000000001", Decimal("1e-18")),
    ],
)
def test_numbers_as_int_decimal_or_strings_are_accepted(wire: object, expected: Decimal) -> None:
    body = copy.deepcopy(VALID["account"])
    body["account"]["balances"]["USD"]["free"] = wire
    free = Account.parse(body).balances["USD"].free
    assert free == expected and isinstance(free, Decimal)

    entry = copy.deepcopy(VALID["ledger"])
    entry["amount"] = wire
    assert LedgerEntry.parse(entry, "ledger[0]").amount == expected


@pytest.mark.parametrize("wire", [12, Decimal("12"), "12", "1.2e1", Decimal("12.000")])
def test_integer_fields_accept_integral_numbers(wire: object) -> None:
    entry = copy.deepcopy(VALID["ledger"])
    entry["ordering"] = wire
    assert LedgerEntry.parse(entry, "ledger[0]").ordering == 12


def assert_ordering_refused(wire: object, where: str) -> None:
    """A ledger entry whose ordering is ``wire`` is refused, naming the field."""
    entry = copy.deepcopy(VALID["ledger"])
    entry["ordering"] = wire
    with pytest.raises(ParseError) as caught:
        LedgerEntry.parse(entry, where)
    assert caught.value.field == f"{where}.ordering"


@pytest.mark.parametrize(
    "wire", [Decimal("12.5"), "12.5", True, 1.5, "twelve", Decimal("NaN"), "Infinity"]
)
def test_integer_fields_refuse_the_rest(wire: object) -> None:
    assert_ordering_refused(wire, "ledger[4]")


@pytest.mark.parametrize(
    "wire", ["9223372036854775808", "-9223372036854775809", "1e100000", Decimal("1E+30")]
)
def test_integer_fields_are_bounded_to_int64(wire: object) -> None:
    """The seed's orderings are int64. An unbounded conversion of a huge exponent (the JSON
    number ``1e1000000``) to int takes about a minute, freezing the terminal."""
    assert_ordering_refused(wire, "ledger[0]")


@pytest.mark.parametrize(
    ("ask", "bid"), [("9e999999", "-9e999999"), ("1e1000000000", "1"), (Decimal("9E+999999"), -1)]
)
def test_extreme_exponents_never_escape_as_decimal_signals(ask: object, bid: object) -> None:
    """A spread computed from absurd quotes must not raise decimal.Overflow."""
    body = {"topOfBooks": {"BTC/USD": {"ask": [ask, 1], "bid": [bid, 1]}}}
    try:
        books = parse_top_of_books(body)
    except ParseError as exc:
        books, problem = {}, str(exc)
    else:
        problem = ""
    assert "topOfBooks.BTC/USD" in problem or books["BTC/USD"].ask == Decimal(str(ask))


@pytest.mark.parametrize("wire", [0.5, True, "NaN", Decimal("Infinity"), "1,000", "0x10", ""])
def test_money_refuses_floats_and_non_numbers(wire: object) -> None:
    body = copy.deepcopy(VALID["account"])
    body["account"]["balances"]["USD"]["free"] = wire
    with pytest.raises(ParseError) as caught:
        Account.parse(body)
    assert caught.value.field == "account.balances.USD.free"


@pytest.mark.parametrize("digits", range(10))
def test_timestamps_with_0_to_9_fractional_digits(digits: int) -> None:
    fraction = "123456789"[:digits]
    stamp = f"2026-01-02T03:04:05{'.' + fraction if digits else ''}Z"
    entry = copy.deepcopy(VALID["ledger"])
    entry["eventTime"] = stamp
    moment = LedgerEntry.parse(entry, "ledger[0]").event_time
    micros = int(fraction.ljust(6, "0")[:6]) if digits else 0
    assert moment == datetime(2026, 1, 2, 3, 4, 5, micros, UTC)


@pytest.mark.parametrize(
    ("name", "path", "where", "missing"),
    [
        ("order", ("result", "status"), "order", "order.result.status"),
        ("order", ("size",), "order", "order.size"),
        ("order", ("result",), "orders[3]", "orders[3].result"),
        ("account", ("account", "accountId"), "", "account.accountId"),
        ("account", ("account", "balances", "USD", "free"), "", "account.balances.USD.free"),
        ("portfolio", ("account", "balances", "BTC", "usedCredit"), "", "account.balances.BTC"),
        ("ledger", ("eventTime",), "ledger[2]", "ledger[2].eventTime"),
        ("deposit", ("created", "at"), "deposits[0]", "deposits[0].created.at"),
        ("quote", ("sell", "expiresAt"), "", "sell.expiresAt"),
        ("estimate", ("price",), "", "price"),
        ("top_of_books", ("topOfBooks", "BTC/USD", "bid"), "", "topOfBooks.BTC/USD.bid"),
        ("instruction_chain", ("address",), "instructions[1]", "instructions[1].address"),
        ("pair", ("assetPair",), "assetPairs[0]", "assetPairs[0].assetPair"),
        ("info", ("info",), "", "info"),
    ],
)
def test_missing_required_field_names_its_path(
    name: str, path: tuple[str, ...], where: str, missing: str
) -> None:
    value = copy.deepcopy(VALID[name])
    holder = value
    for key in path[:-1]:
        holder = holder[key]
    del holder[path[-1]]
    parse: dict[str, Callable[[Any], object]] = {
        "order": lambda b: Order.parse(b, where),
        "ledger": lambda b: LedgerEntry.parse(b, where),
        "deposit": lambda b: DepositRecord.parse(b, where),
        "instruction_chain": lambda b: parse_instruction(b, where),
        "pair": lambda b: PairInfo.parse(b, where),
    }
    with pytest.raises(ParseError) as caught:
        parse.get(name, PARSERS[name])(value)
    assert missing in str(caught.value)
    assert caught.value.field.startswith(missing)


def test_optional_fields_may_be_missing_or_empty() -> None:
    order = copy.deepcopy(VALID["order"])
    for key in ("ordering", "accountId", "userId", "email", "type", "submittedAt", "source"):
        del order[key]
    for key in ("clientOrderId", "limit", "endAt"):
        order.pop(key)
    order["result"] = {"status": "submitted", "price": "", "total": "", "executedAt": ""}
    parsed = Order.parse(order, "order")
    assert parsed.source == "BTC"  # taken from the size
    assert parsed.ordering is None and parsed.submitted_at is None and parsed.limit is None
    assert parsed.result.price is None and parsed.result.total is None
    assert parsed.result.executed_at is None and parsed.result.error == ""


def test_values_are_exact_domain_types() -> None:
    order = Order.parse(copy.deepcopy(VALID["order"]), "order")
    assert order.size == Amount(Decimal("0.5"), "BTC")
    assert order.result.price == Price(Decimal("60000"), "BTC", "USD")
    assert order.result.total == Amount(Decimal("30000"), "USD")
    assert order.limit == Price(Decimal("59000"), "BTC", "USD")
    assert order.end_at == datetime(2026, 1, 2, 3, 4, 5, 123456, UTC)

    books = parse_top_of_books(copy.deepcopy(VALID["top_of_books"]))
    book = books["BTC/USD"]
    assert (book.bid, book.bid_size, book.ask, book.ask_size) == (
        Decimal("59995"),
        Decimal(2),
        Decimal("60005"),
        Decimal("1.5"),
    )
    assert book.mid == Decimal("60000") and book.spread == Decimal("10")
    without_spread = copy.deepcopy(VALID["top_of_books"])
    del without_spread["topOfBooks"]["BTC/USD"]["spread"]
    assert parse_top_of_books(without_spread)["BTC/USD"].spread == Decimal("10")

    assert PairInfo.parse("ETH/BTC", "assetPairs[0]").pair.base == "ETH"
    info = ServiceInfo.parse(copy.deepcopy(VALID["info"]))
    assert (info.service, info.version, info.commit) == ("routing", "0.1.0", "abc")
    assert ServiceInfo.parse({"info": {}}).built_at is None
    quote = Quote.parse(copy.deepcopy(VALID["quote"]))
    assert quote.side("sell").destination == Amount(Decimal("599.7"), "USD")
    with pytest.raises(ValueError, match="buy or sell"):
        quote.side("both")
