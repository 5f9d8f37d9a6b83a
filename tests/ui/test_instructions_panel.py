"""Instructions panel on a real sandbox: cards per network, QR codes, copy, fiat, unknown types."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
import segno
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.domain.records import FIAT_FIELDS, OtherInstruction, parse_instruction
from app.services.transfers import InstructionBook
from app.ui.panels.instructions import InstructionsPanel
from app.ui.qr import QUIET_ZONE, QrCodeWidget
from app.ui.widgets.instruction_card import BlockchainCard, FiatCard, RawCard, build_card
from tests.harness import Faults, Session, body
from tests.helpers.live import Live
from tests.helpers.qt import shown

WAIT_MS = 10_000


def server_instructions(session: Session, direction: str) -> list[dict[str, Any]]:
    response = session.get(
        f"/api/v1/accounting/account/{{account}}/request/{direction}-instructions"
    )
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = body(response)["instructions"]
    return items


def expected_matrix(text: str) -> tuple[tuple[bool, ...], ...]:
    """segno's own modules for ``text`` (medium error correction, 4-module quiet zone)."""
    code = segno.make(text, error="m", micro=False)
    return tuple(tuple(m == 1 for m in row) for row in code.matrix_iter(scale=1, border=4))


def drawn_matrix(widget: QrCodeWidget) -> tuple[tuple[bool, ...], ...]:
    """The modules as painted on screen: the centre pixel of every module, dark or light."""
    image = widget.grab().toImage()
    rect, size = widget.code_rect(), widget.module_size()
    count = rect.width() // size
    return tuple(
        tuple(
            QColor(
                image.pixel(rect.x() + col * size + size // 2, rect.y() + row * size + size // 2)
            ).lightness()
            < 128
            for col in range(count)
        )
        for row in range(count)
    )


@pytest.fixture
def panel(qtbot: QtBot, live: Live) -> InstructionsPanel:
    widget = shown(qtbot, InstructionsPanel(live.context), 900, 1400)
    qtbot.waitUntil(lambda: widget.loaded and bool(widget.cards), timeout=WAIT_MS)
    return widget


def test_fills_from_the_sandbox_with_the_network_named_three_times(
    panel: InstructionsPanel, live: Live
) -> None:
    items = server_instructions(live.account, "deposit")
    assert [panel.asset_box.itemText(i) for i in range(panel.asset_box.count())] == [
        "BTC",
        "ETH",
        "USDT",
        "SOL",
        "USD",
    ]
    assert panel.direction == "deposit" and panel.asset == "BTC"
    (card,) = panel.cards
    assert isinstance(card, BlockchainCard)
    btc = next(i for i in items if i["asset"] == "BTC")
    assert card.address.value == btc["address"]
    assert card.address.edit.text() == btc["address"] and card.address.edit.isReadOnly()
    assert "BITCOIN" in card.header.text()
    assert "Send only BTC on the BITCOIN network" in card.warning.text()
    assert "BITCOIN" in card.qr_caption.text()
    assert card.qr.isVisible() and card.warning.isVisible()


def test_an_asset_on_two_networks_gets_two_cards_that_name_each_other(
    panel: InstructionsPanel, live: Live
) -> None:
    items = server_instructions(live.account, "deposit")
    panel.set_asset("USDT")
    addresses = {i["networkType"]: i["address"] for i in items if i["asset"] == "USDT"}
    assert [c.network for c in panel.cards if isinstance(c, BlockchainCard)] == [
        "ETHEREUM",
        "TRON",
    ]
    assert "2 networks: ETHEREUM, TRON" in panel.summary.text()
    for card, (network, other) in zip(
        panel.cards, (("ethereum", "TRON"), ("tron", "ETHEREUM")), strict=True
    ):
        assert isinstance(card, BlockchainCard)
        assert card.address.value == addresses[network]
        assert card.qr.text() == addresses[network]
        assert f"on the {network.upper()} network" in card.warning.text()
        assert f"also be deposited on {other}" in card.warning.text()
        assert network.upper() in card.header.text() and network.upper() in card.qr_caption.text()


def test_the_qr_code_encodes_exactly_the_address_crisply_at_any_size(
    qtbot: QtBot, panel: InstructionsPanel
) -> None:
    panel.set_asset("USDT")
    for card in panel.cards:
        assert isinstance(card, BlockchainCard)
        address = card.address.value
        assert card.qr.matrix() == expected_matrix(address)
        assert drawn_matrix(card.qr) == expected_matrix(address)
    first = panel.cards[0]
    assert isinstance(first, BlockchainCard)
    qr = QrCodeWidget(first.address.value)
    qtbot.addWidget(qr)
    sizes = []
    for side in (120, 333):
        qr.resize(side, side)
        qr.show()
        size = qr.module_size()
        sizes.append(size)
        assert qr.code_rect().width() == size * len(qr.matrix()) <= side  # whole pixels
        assert drawn_matrix(qr) == expected_matrix(qr.text())
        image = qr.grab().toImage()
        corner = qr.code_rect().topLeft()
        quiet = QColor(image.pixel(corner.x() + QUIET_ZONE * size - 1, corner.y() + 1))
        assert quiet.lightness() > 200  # the quiet zone is painted light
    assert sizes[1] > sizes[0]


def test_copy_puts_the_exact_address_on_the_clipboard(panel: InstructionsPanel) -> None:
    panel.set_asset("ETH")
    (card,) = panel.cards
    assert isinstance(card, BlockchainCard)
    QApplication.clipboard().setText("something else")
    QTest.mouseClick(card.address.button, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == card.address.value
    assert card.address.button.text() == "Copied"


def test_fiat_shows_every_wire_field_with_its_own_copy_button(
    panel: InstructionsPanel, live: Live
) -> None:
    wire = next(i for i in server_instructions(live.account, "deposit") if i["asset"] == "USD")
    panel.set_asset("USD")
    (card,) = panel.cards
    assert isinstance(card, FiatCard)
    assert list(card.fields) == list(FIAT_FIELDS)
    for name, field in card.fields.items():
        assert field.value == wire[name]
        assert field.button.isVisible()
        QTest.mouseClick(field.button, Qt.MouseButton.LeftButton)
        assert QApplication.clipboard().text() == wire[name]
    assert "WIRE" in card.header.text()


def test_withdraw_shows_where_withdrawals_go(
    qtbot: QtBot, panel: InstructionsPanel, live: Live
) -> None:
    items = server_instructions(live.account, "withdraw")
    panel.set_asset("USDT")
    QTest.mouseClick(panel.withdraw_button, Qt.MouseButton.LeftButton)
    assert panel.direction == "withdraw"
    (card,) = panel.cards
    assert isinstance(card, BlockchainCard)
    tron = next(i for i in items if i["asset"] == "USDT")
    assert card.address.value == tron["address"] and card.qr.text() == tron["address"]
    assert "Withdrawals of USDT on the TRON network go to this address" in card.warning.text()
    assert "withdrawal address" in card.qr_caption.text()
    panel.set_asset("USD")
    assert panel.cards == []
    assert panel.summary.text() == "No withdraw instructions for USD."

    again = InstructionsPanel(live.context)  # the choice is remembered
    qtbot.addWidget(again)
    qtbot.waitUntil(lambda: again.loaded, timeout=WAIT_MS)
    assert (again.direction, again.asset) == ("withdraw", "USD")


def test_an_unknown_instruction_type_shows_its_raw_fields(
    qtbot: QtBot, panel: InstructionsPanel
) -> None:
    wire = json.loads(
        '{"asset": "XRP", "assetType": "ledger", "network": "xrpl",'
        ' "address": "rSandboxAddr", "destinationTag": 104729, "minimum": 0.000010}',
        parse_float=Decimal,
    )
    instruction = parse_instruction(wire, "instructions[0]")
    assert isinstance(instruction, OtherInstruction)
    card = build_card(instruction, "deposit")
    qtbot.addWidget(card)
    assert isinstance(card, RawCard)
    assert {name: f.value for name, f in card.fields.items()} == {
        "asset": "XRP",
        "assetType": "ledger",
        "network": "xrpl",
        "address": "rSandboxAddr",
        "destinationTag": "104729",
        "minimum": "0.000010",  # exactly as sent
    }
    assert "ledger" in card.header.text()

    panel.set_book(InstructionBook(deposit=(instruction,)))
    assert panel.asset == "XRP"
    (shown,) = panel.cards
    assert isinstance(shown, RawCard) and shown.fields["destinationTag"].value == "104729"


def test_extra_fields_of_a_blockchain_instruction_are_not_dropped(qtbot: QtBot) -> None:
    wire = {
        "asset": "XRP",
        "assetType": "blockchain",
        "networkType": "xrpl",
        "address": "rSandboxAddr",
        "memo": "104729",
    }
    card = build_card(parse_instruction(wire, "i"), "deposit")
    qtbot.addWidget(card)
    assert isinstance(card, BlockchainCard)
    assert card.fields["memo"].value == "104729"
    assert card.qr.text() == "rSandboxAddr"


@pytest.mark.slow
def test_a_failed_read_is_explained_and_refresh_recovers(
    qtbot: QtBot, live: Live, faults: Faults
) -> None:
    path = rf"^/api/v1/accounting/account/{live.account.account}/request/.*-instructions$"
    faults({"kind": "status", "status": 503, "path": path})
    widget = InstructionsPanel(live.context)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitUntil(lambda: widget.loaded, timeout=WAIT_MS)
    assert widget.error_label.isVisible()
    assert widget.error_label.text().startswith("Cannot read deposit instructions: HTTP 503")
    assert any(level == "warning" for level, _ in live.notices)
    assert widget.cards == []

    faults.clear()
    QTest.mouseClick(widget.refresh_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(widget.cards), timeout=WAIT_MS)
    assert not widget.error_label.isVisible()
