"""The bridge turns service events into Qt signals with live sandbox data."""

from __future__ import annotations

import gc
import weakref
from datetime import datetime

import pytest
import shiboken6
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.api import NetworkError
from app.services.events import Topic
from app.services.health import Health
from app.services.poller import FeedStatus
from app.ui.bridge import QtTopic
from app.ui.freshness import assess_feed
from tests.helpers.live import Live
from tests.helpers.qt import run


def test_signals_carry_live_data(qtbot: QtBot, live: Live) -> None:
    with qtbot.waitSignal(live.bridge.topOfBook, timeout=5000) as top:
        pass
    assert "BTC/USD" in top.args[0]
    with qtbot.waitSignal(live.bridge.orderBook, timeout=5000) as book:
        live.bridge.select_pair("ETH/BTC")
    qtbot.waitUntil(lambda: live.session.selected_pair == "ETH/BTC")
    assert book.args[0] is not None
    with qtbot.waitSignal(live.bridge.balances, timeout=5000) as balances:
        live.session.after_fill()
    assert balances.args[0].account.account_id == live.account.account


# -- freshness: is the data a panel shows still true? ---------------------------------------------


def status(failures: int = 0, age: float | None = 1.0, interval: float = 1.0) -> FeedStatus:
    last_ok = None if age is None else NOW - age
    error = NetworkError("cannot reach the service") if failures else None
    return FeedStatus("balances", interval, last_ok, 0.01, failures, error)


NOW = 10_000.0


def test_a_feed_is_stale_when_offline_failing_or_too_old() -> None:
    assert not assess_feed(status(), Health.LIVE, NOW).stale
    assert not assess_feed(status(age=None), Health.CONNECTING, NOW).stale  # connecting
    assert not assess_feed(None, Health.DEGRADED, NOW).stale
    failing = assess_feed(status(failures=1, age=2.0), Health.DEGRADED, NOW)
    assert failing.stale and "failing" in failing.reason
    old = assess_feed(status(age=3.5), Health.DEGRADED, NOW)
    assert old.stale and old.since is not None
    assert old.mark() == f"stale since {old.since:%H:%M:%S}"
    assert abs((datetime.now() - old.since).total_seconds() - 3.5) < 1
    offline = assess_feed(status(), Health.OFFLINE, NOW)
    assert offline.stale and offline.reason == "The connection is offline."
    assert assess_feed(status(age=None, failures=2), Health.OFFLINE, NOW).mark() == (
        "no data from the service"
    )
    assert assess_feed(status(), Health.LIVE, NOW).mark() == ""


@pytest.mark.slow
def test_freshness_follows_the_live_feeds(qtbot: QtBot, live: Live) -> None:
    """A panel's freshness turns stale when its feed stops and fresh when it runs again."""
    owner = QObject()
    freshness = live.bridge.freshness(live.bridge.balances_feed, owner)
    qtbot.waitUntil(lambda: live.session.balances.snapshot().last_ok is not None, timeout=5000)
    assert freshness.current.mark() == ""  # fresh
    run(qtbot, live.session.balances.stop())
    with qtbot.waitSignal(freshness.changed, timeout=6000) as stale:
        pass
    assert stale.args[0].stale and freshness.stale
    live.session.balances.start()
    with qtbot.waitSignal(freshness.changed, timeout=6000) as fresh:
        pass
    assert not fresh.args[0].stale
    owner.deleteLater()


# -- QtTopic: one topic, one owner, its lifetime ---------------------------------------------------


class Listener(QWidget):
    def __init__(self, topic: Topic[int]) -> None:
        super().__init__()
        self.heard: list[int] = []
        self.values = QtTopic(topic, self)
        self.values.connect(self.hear)

    def hear(self, value: int) -> None:
        self.heard.append(value)


def latest(topic: QtTopic[int]) -> int | None:
    return topic.latest


def test_a_topic_reaches_its_owner_while_it_lives_and_keeps_the_latest(qtbot: QtBot) -> None:
    topic: Topic[int] = Topic("numbers")
    listener = Listener(topic)
    qtbot.addWidget(listener)
    assert latest(listener.values) is None
    topic.publish(1)
    topic.publish(2)
    assert listener.heard == [1, 2] and latest(listener.values) == 2
    listener.values.disconnect(listener.hear)
    topic.publish(3)
    assert listener.heard == [1, 2] and latest(listener.values) == 3


def test_an_owner_that_goes_is_unsubscribed_and_never_kept_alive(qtbot: QtBot) -> None:
    """The service's topic must neither call a deleted widget nor keep a forgotten one alive
    (the owner's own methods are held weakly)."""
    topic: Topic[int] = Topic("numbers")
    deleted = Listener(topic)
    heard = deleted.heard
    deleted.deleteLater()
    qtbot.waitUntil(lambda: not shiboken6.isValid(deleted))
    topic.publish(1)  # no "Internal C++ object already deleted", nothing heard
    assert heard == []

    forgotten = Listener(topic)
    gone = weakref.ref(forgotten)
    del forgotten
    gc.collect()
    assert gone() is None
    topic.publish(2)  # the subscription went with it
    assert topic._subscribers == []
