"""The algo ticket against the real sandbox: the confirmation shows the exact spec that is
started, a side switch with a typed amount converts it visibly (never sent in the wrong asset),
the preview lists a TWAP's slices, a refused spec shows its words and keeps the fields."""

from __future__ import annotations

import itertools
from decimal import Decimal

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from app.ui.panels.algo_ticket import AlgoTicketPanel
from app.ui.panels.algo_ticket_view import spec_lines
from tests.helpers.live import Live

PAIR = "BTC/USD"


def open_ticket(qtbot: QtBot, live: Live) -> AlgoTicketPanel:
    live.bridge.select_pair(PAIR)
    qtbot.waitUntil(lambda: PAIR in (live.bridge.topOfBook.latest or {}), timeout=10_000)
    panel = AlgoTicketPanel(live.context)
    qtbot.addWidget(panel)
    panel.resize(420, 760)
    panel.show()
    panel.pair_box.setCurrentText(PAIR)
    qtbot.waitUntil(lambda: panel.pair == PAIR, timeout=15_000)
    return panel


def type_into(edit: QLineEdit, text: str) -> None:
    edit.selectAll()
    QTest.keyClick(edit, Qt.Key.Key_Delete)
    QTest.keyClicks(edit, text)


def choose(panel: AlgoTicketPanel, kind: str) -> None:
    panel.kind_box.setCurrentIndex(panel.kind_box.findData(kind))


def confirm(qtbot: QtBot, panel: AlgoTicketPanel) -> QMessageBox:
    QTest.mouseClick(panel.send_button, Qt.MouseButton.LeftButton)
    box = panel.confirmation
    assert isinstance(box, QMessageBox) and box.isVisible()
    return box


def test_side_switch_converts_the_amount_and_the_spec_sent_is_the_one_shown(
    qtbot: QtBot, live: Live
) -> None:
    panel = open_ticket(qtbot, live)
    choose(panel, "twap")
    assert panel.amount_unit.text() == "USD to spend"
    type_into(panel.amount, "900")
    type_into(panel.field("duration"), "0.01")
    type_into(panel.field("slices"), "2")
    ask = (live.bridge.topOfBook.latest or {})[PAIR].ask
    QTest.mouseClick(panel.sell_button, Qt.MouseButton.LeftButton)
    assert panel.amount_unit.text() == "BTC to sell"  # the asset shown changed with the side
    converted = Decimal(panel.amount.text())
    assert converted < 1  # now BTC, never 900 BTC
    assert abs(converted * ask - 900) < ask * Decimal("0.00000002")  # at the ask, cut down
    assert "900 USD" in panel.conversion.text() and "BTC" in panel.conversion.text()
    box = confirm(qtbot, panel)
    shown = panel.pending
    assert shown is not None and shown.side == "sell" and shown.source == "BTC"
    assert shown.amount == converted and shown.slices == 2
    assert "\n".join(spec_lines(shown)) == box.informativeText()
    assert f"Amount: {converted} BTC (to sell)" in box.informativeText()
    assert "Duration: 0.60 s" in box.informativeText() and "Collar: 10 bps" in box.informativeText()
    before = set(live.bridge.algos.parents if live.bridge.algos else {})
    send = box.findChild(QPushButton, "algoConfirmSend")
    assert send is not None
    QTest.mouseClick(send, Qt.MouseButton.LeftButton)
    engine = live.bridge.algos
    assert engine is not None
    (started,) = [p for p in engine.parents.values() if p.id not in before]
    assert started.spec == shown  # exactly the spec the confirmation showed
    assert "Started" in panel.error.text()
    qtbot.waitUntil(lambda: started.ended, timeout=20_000)
    assert started.filled == converted


def test_preview_lists_the_twap_slices(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    choose(panel, "twap")
    type_into(panel.amount, "1000")
    type_into(panel.field("slices"), "4")
    type_into(panel.field("duration"), "3")
    qtbot.waitUntil(
        lambda: panel.shown_preview is not None and len(panel.shown_preview.slices) == 4,
        timeout=15_000,
    )
    preview = panel.shown_preview
    assert preview is not None
    assert [s.size for s in preview.slices] == [Decimal(250)] * 4
    times = [s.at for s in preview.slices if s.at is not None]
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    assert gaps == [60.0, 60.0, 60.0]
    text = panel.preview_label.text()
    assert "4 children" in text and "#4: 250.00 USD" in text
    assert "BTC at the ask" in text  # the estimate received at the touch
    assert panel.preview_label.isVisible()


def test_only_the_fields_of_the_kind_are_shown(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    choose(panel, "clip")
    assert panel.fields["display"].isVisible() and not panel.fields["slices"].isVisible()
    choose(panel, "stop")
    assert panel.fields["trigger"].isVisible() and not panel.fields["display"].isVisible()


def test_a_refused_spec_shows_its_words_and_keeps_the_fields(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    choose(panel, "clip")
    QTest.mouseClick(panel.sell_button, Qt.MouseButton.LeftButton)
    type_into(panel.amount, "0.5")
    QTest.mouseClick(panel.send_button, Qt.MouseButton.LeftButton)
    assert panel.confirmation is None
    assert panel.error.text() == "Not sent: enter the clip size"
    assert panel.amount.text() == "0.5"
    type_into(panel.field("display"), "0")
    QTest.mouseClick(panel.send_button, Qt.MouseButton.LeftButton)
    assert "display size greater than zero" in panel.error.text()
    assert (panel.amount.text(), panel.field("display").text()) == ("0.5", "0")
    engine = live.bridge.algos
    assert engine is not None and engine.parents == {}


def test_an_engine_refusal_is_shown_with_the_fields_kept(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    choose(panel, "twap")
    type_into(panel.amount, "100")
    box = confirm(qtbot, panel)
    engine = live.bridge.algos
    assert engine is not None
    # the service's pairs changed under the ticket: the engine refuses, in words
    live.session.pair_info.pop(PAIR, None)
    send = box.findChild(QPushButton, "algoConfirmSend")
    assert send is not None
    QTest.mouseClick(send, Qt.MouseButton.LeftButton)
    assert panel.error.text() == "Not sent: BTC/USD is not a pair the service lists"
    assert panel.amount.text() == "100" and engine.parents == {}


def test_a_pair_switch_clears_the_amount_and_prices(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    choose(panel, "stop")
    type_into(panel.amount, "1000")
    type_into(panel.field("trigger"), "95000")
    live.bridge.select_pair("ETH/USD")  # picked elsewhere: the typed ticket keeps its pair
    QTest.qWait(0)
    assert panel.pair == PAIR
    panel.pair_box.setCurrentText("ETH/USD")
    assert (panel.amount.text(), panel.field("trigger").text()) == ("", "")
    assert "cleared" in panel.conversion.text()
    live.bridge.select_pair(PAIR)  # nothing typed: it follows the selection
    qtbot.waitUntil(lambda: panel.pair == PAIR, timeout=15_000)
