"""The market as the terminal knows it: one copy, numbered, for every reader.

Tickets, desks, positions and checks all read the market from here instead of keeping their
own copies from the signals that woke them. Each change (a top-of-book answer, a balances
answer, the pairs list) makes a new frozen ``MarketSnapshot`` with the next ``id``; a preview
records the id it was computed from, so a send can be checked on exactly the market the trader
saw, and a reader can tell "the same market" from "a market that happens to look alike".

Data flow: poller answer → ``Market`` (one snapshot) → ``changed`` subscribers (the desks,
positions) → previews and reports → the widgets, which only render them.

No Qt (design.md §1); the inputs are narrow (two topics and a function for the pairs list), so
a test can drive a ``Market`` with plain topics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from app.domain.records import Balances, PairInfo, TopOfBook
from app.services.events import Topic

_EMPTY_TOPS: Mapping[str, TopOfBook] = MappingProxyType({})
_EMPTY_PAIRS: Mapping[str, PairInfo] = MappingProxyType({})


@dataclass(frozen=True)
class MarketSnapshot:
    """The market at one moment: top of book by pair, both balance views, the pairs list.

    ``id`` grows by one with every change seen by the ``Market`` that made it; 0 is the empty
    market before any answer."""

    id: int = 0
    tops: Mapping[str, TopOfBook] = field(default_factory=lambda: _EMPTY_TOPS)
    balances: Balances | None = None
    pair_info: Mapping[str, PairInfo] = field(default_factory=lambda: _EMPTY_PAIRS)

    def top(self, pair: str) -> TopOfBook | None:
        return self.tops.get(pair)


class Market:
    """Holds the one current ``MarketSnapshot`` and publishes each new one on ``changed``.

    ``tops`` and ``balances`` are the pollers' data topics; ``pair_info`` is read when a
    snapshot is made (the session learns the pairs once at start)."""

    def __init__(
        self,
        tops: Topic[dict[str, TopOfBook]],
        balances: Topic[Balances],
        pair_info: Callable[[], Mapping[str, PairInfo]] = lambda: _EMPTY_PAIRS,
    ) -> None:
        self._pair_info = pair_info
        self._snapshot = MarketSnapshot(pair_info=MappingProxyType(dict(pair_info())))
        self.changed: Topic[MarketSnapshot] = Topic("market")
        self._unsubscribe = [tops.subscribe(self._on_tops), balances.subscribe(self._on_balances)]

    @property
    def snapshot(self) -> MarketSnapshot:
        return self._snapshot

    def close(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []

    def _on_tops(self, tops: dict[str, TopOfBook]) -> None:
        # The poller hands over a fresh dict per answer; a read-only view keeps it unshared.
        self._advance(tops=MappingProxyType(dict(tops)))

    def _on_balances(self, balances: Balances) -> None:
        self._advance(balances=balances)

    def pairs_changed(self) -> None:
        """The pairs list was (re)learned: a new snapshot carries it. Read only here, not on
        every tick (comparing hundreds of pairs per top-of-book answer bought nothing: the
        session learns them once, and says so)."""
        self._advance(pair_info=MappingProxyType(dict(self._pair_info())))

    def _advance(self, **changes: object) -> None:
        snapshot = replace(self._snapshot, id=self._snapshot.id + 1, **changes)  # type: ignore[arg-type]
        self._snapshot = snapshot
        self.changed.publish(snapshot)
