"""The trader's terms (design.md §8): an order between two assets read as Buy or Sell of a
pair's base, prices as QUOTE per BASE, fills in words; and precision from the service."""

from __future__ import annotations

from decimal import Decimal

import pytest

from app.domain import Amount, AssetPair, Price
from app.domain.display import Precision
from app.domain.pair_terms import PairSide, Trade
from app.domain.records import Order, OrderResult, PairInfo

D = Decimal
PAIRS = ("BTC/USD", "ETH/BTC")


def test_buying_the_base_spends_the_quote() -> None:
    buy = PairSide.of("USD", "BTC", PAIRS)
    assert (str(buy.pair), buy.side, buy.source, buy.destination) == (
        "BTC/USD",
        "buy",
        "USD",
        "BTC",
    )
    sell = PairSide.of("BTC", "ETH", PAIRS)  # ETH/BTC is listed: selling BTC buys ETH
    assert (str(sell.pair), sell.side) == ("ETH/BTC", "buy")
    assert str(PairSide.of("BTC", "USD", PAIRS)) == "Sell BTC/USD"


def test_prices_read_as_quote_per_base_whichever_way_the_wire_wrote_them() -> None:
    buy = PairSide.of("USD", "BTC", PAIRS)
    wire = Price(D("0.0000110018371968"), "USD", "BTC")
    assert buy.price(wire) == wire.invert()
    assert buy.price(Price(D(90000), "BTC", "USD")) == Price(D(90000), "BTC", "USD")
    with pytest.raises(ValueError, match="BTC/USD"):
        buy.price(Price(D(1), "ETH", "USD"))


def order(source: str, destination: str, size: str, total: str, status: str = "filled") -> Order:
    result = OrderResult.parse(
        {"status": status, "total": f"{total} {destination}"} if total else {"status": status},
        "result",
    )
    return Order(
        "o1",
        1,
        "acct",
        "user",
        "",
        Amount(D(size), source),
        source,
        destination,
        "market",
        None,
        result,
    )


def _amount(text: str, asset: str) -> object:

    return Amount(D(text), asset)


def test_a_fill_reads_as_bought_or_sold_at_the_pairs_price() -> None:
    precision = Precision()
    precision.learn({"BTC/USD": PairInfo(AssetPair("BTC", "USD"), D("0.01"), 8, 2)})
    bought = Trade.of(order("USD", "BTC", "10000", "0.11001837"), PAIRS)
    assert bought is not None
    assert bought.sentence(precision) == (
        "Bought 0.11001837 BTC at an average fill price of 90,893.91 USD (spent 10,000.00 USD)"
    )
    sold = Trade.of(order("BTC", "USD", "0.5", "45000.5"), PAIRS)
    assert sold is not None and sold.price == D("90001")
    assert (
        sold.sentence(precision)
        == "Sold 0.50000000 BTC at an average fill price of 90,001.00 USD (received 45,000.50 USD)"
    )
    assert Trade.of(order("USD", "BTC", "10", "", status="submitted"), PAIRS) is None


def test_the_services_precision_replaces_the_defaults_and_nothing_is_rounded() -> None:
    precision = Precision()
    precision.learn({"ETH/USD": PairInfo(AssetPair("ETH", "USD"), D("0.01"), 8, 2)})
    assert precision.asset("ETH") == 8  # the default said 6
    assert precision.exact(D("175.03234278"), "ETH") == "175.03234278"
    assert precision.exact(D("175.5"), "ETH") == "175.50000000"
    assert precision.exact(D("0.123456789"), "USD") == "0.123456789"  # more than held: never


def test_pairs_that_disagree_on_an_asset_show_its_finer_decimals() -> None:
    precision = Precision()
    precision.learn(
        {
            "ETH/USD": PairInfo(AssetPair("ETH", "USD"), D("0.01"), 8, 2),
            "USDT/USD": PairInfo(AssetPair("USDT", "USD"), D("0.0001"), 6, 4),
        }
    )
    assert precision.asset("USD") == 4


def test_a_fill_with_nothing_received_has_no_price() -> None:
    assert Trade.of(order("USD", "BTC", "10", "0"), PAIRS) is None


def test_price_places_asked_before_the_service_speaks_follow_what_it_says() -> None:
    """``price`` is remembered per pair (the watchlist asks on every tick); ``learn`` forgets."""
    precision = Precision()
    before = precision.price("BTC/USD")
    assert before == 2
    precision.learn({"BTC/USD": PairInfo(AssetPair("BTC", "USD"), D("0.0001"), 8, 2)})
    assert precision.price("BTC/USD") == 4
    assert precision.price_text(D("1.5"), "BTC/USD") == "1.5000"
