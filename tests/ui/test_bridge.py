"""The bridge turns service events into Qt signals with live sandbox data."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from tests.ui.conftest import Live


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
