"""The one copy of the market: numbered snapshots, one per change, shared by every reader."""

from __future__ import annotations

from decimal import Decimal

from app.domain.money import AssetPair
from app.domain.records import PairInfo, TopOfBook
from app.services.events import Topic
from app.services.market import Market, MarketSnapshot


def _top(pair: str, bid: str, ask: str) -> TopOfBook:
    b, a = Decimal(bid), Decimal(ask)
    return TopOfBook(AssetPair.parse(pair, "test"), b, Decimal(1), a, Decimal(1), a - b)


def test_each_answer_makes_the_next_snapshot_and_is_published() -> None:
    tops: Topic[dict[str, TopOfBook]] = Topic("tops")
    balances = Topic[object]("balances")
    market = Market(tops, balances)  # type: ignore[arg-type]
    seen: list[MarketSnapshot] = []
    market.changed.subscribe(seen.append)
    assert market.snapshot.id == 0 and market.snapshot.top("BTC/USD") is None

    answer = {"BTC/USD": _top("BTC/USD", "100", "101")}
    tops.publish(answer)
    answer["BTC/USD"] = _top("BTC/USD", "1", "2")  # the poller's dict is not shared
    tops.publish({"BTC/USD": _top("BTC/USD", "102", "103")})

    assert [snapshot.id for snapshot in seen] == [1, 2]
    assert seen[0].top("BTC/USD") == _top("BTC/USD", "100", "101")
    assert seen[1].top("BTC/USD") == _top("BTC/USD", "102", "103")
    assert market.snapshot is seen[-1]


def test_the_pairs_list_is_carried_once_learned_and_close_stops_listening() -> None:
    tops: Topic[dict[str, TopOfBook]] = Topic("tops")
    pairs: dict[str, PairInfo] = {}
    market = Market(tops, Topic("balances"), lambda: pairs)
    pairs["BTC/USD"] = PairInfo(AssetPair.parse("BTC/USD", "test"), Decimal("0.01"), 8, 2)
    market.pairs_changed()
    assert market.snapshot.id == 1 and "BTC/USD" in market.snapshot.pair_info
    market.close()
    tops.publish({"BTC/USD": _top("BTC/USD", "100", "101")})
    assert market.snapshot.id == 1
