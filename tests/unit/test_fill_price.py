"""One price for one fill: the service's rate (``invertedPrice``, the ask the order met) and the
average the total gives differ by the total's rounding; every view reads the one average fill
price, rounded once, half-even at the pair's price increment."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from app.domain.display import Precision
from app.domain.fill_price import AVERAGE_LABEL, FillPrice
from app.domain.money import AssetPair
from app.domain.order_terms import OrderTerms, fill_price
from app.domain.pair_terms import Trade
from app.domain.records import Order, PairInfo

D = Decimal
PAIRS = ("BTC/USD",)


def sold(total: str | None, price: str = "90999.68") -> Order:
    """0.1 BTC sold at a bid of 90,999.68: the service rounds 9,099.968 down to 9,099.96."""
    result: dict[str, Any] = {
        "status": "filled",
        "price": f"{price} BTC/USD",
        "invertedPrice": "0.0000109890495 USD/BTC",
    }
    if total is not None:
        result["total"] = f"{total} USD"
    raw = {
        "orderId": "o1",
        "size": "0.1 BTC",
        "source": "BTC",
        "destination": "USD",
        "type": "market",
        "result": result,
    }
    return Order.parse(raw, "order")


def precision() -> Precision:
    shown = Precision()
    shown.learn({"BTC/USD": PairInfo(AssetPair("BTC", "USD"), D("0.01"), 8, 2)})
    return shown


def test_the_average_of_the_total_is_the_price_everywhere_not_the_services_rate() -> None:
    order = sold("9099.96")
    fill = fill_price(order, PAIRS)
    assert fill == FillPrice(AssetPair("BTC", "USD"), D("90999.6"), average=True)
    assert fill.label == AVERAGE_LABEL
    terms = OrderTerms.of(order, PAIRS)
    trade = Trade.of(order, PAIRS)
    assert trade is not None
    assert terms.price == trade.price == fill.value  # the rate 90,999.68 is in no view
    shown = precision()
    assert fill.text(shown) == "90,999.60" and fill.rounded(shown) == D("90999.60")
    sentence = trade.sentence(shown)
    assert sentence == (
        "Sold 0.10000000 BTC at an average fill price of 90,999.60 USD (received 9,099.96 USD)"
    )
    assert "90,999.68" not in sentence


def test_without_a_total_the_services_rate_is_the_price_and_says_so() -> None:
    fill = fill_price(sold(None), PAIRS)
    assert fill == FillPrice(AssetPair("BTC", "USD"), D("90999.68"), average=False)
    assert fill.label == "price"
    assert fill.phrase(precision()) == "a price of 90,999.68 USD"


def test_the_rounding_is_half_even_at_the_pairs_increment() -> None:
    shown = precision()
    pair = AssetPair("BTC", "USD")
    for exact, text in (
        ("90999.605", "90,999.60"),  # a half: to the even cent
        ("90999.615", "90,999.62"),
        ("90999.6050000001", "90,999.61"),
        ("1000.125", "1,000.12"),
    ):
        fill = FillPrice(pair, D(exact))
        assert fill.text(shown) == text, exact
        assert fill.rounded(shown) == D(text.replace(",", ""))
    buy = Trade.of(
        Order.parse(
            {
                "orderId": "b",
                "size": "10000 USD",
                "source": "USD",
                "destination": "BTC",
                "result": {"status": "filled", "total": "0.10989049 BTC"},
            },
            "order",
        ),
        PAIRS,
    )
    assert buy is not None
    # 10,000 / 0.10989049 = 90,999.685…: the exact quotient (50 digits) is kept for the
    # computations; the text rounds it once.
    assert str(buy.price).startswith("90999.68523208878220490235324276013329")
    assert buy.fill_price.text(shown) == "90,999.69"
