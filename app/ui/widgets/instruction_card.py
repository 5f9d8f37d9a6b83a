"""One card per transfer instruction: where to send funds, impossible to misread.

A blockchain card names its network three times — in the coloured header, in the warning, and
under the QR code — because a deposit sent on the wrong network is lost. The address is in
monospace with a Copy button, and the QR code encodes exactly that address. Fields the card does
not know (a memo or tag some networks need) are shown too, never dropped. A fiat card lists every
wire field with its own Copy button; an instruction of an unknown type shows its raw fields.
The warning box has the theme's colours (a notice's warning tint and frame) and follows a theme
switch; the headers keep their network colours in every theme.
"""

from __future__ import annotations

import json
import zlib
from decimal import Decimal
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from app.domain import format_decimal
from app.domain.records import (
    BlockchainInstruction,
    FiatInstruction,
    Instruction,
    OtherInstruction,
)
from app.ui.notices import notice_colours
from app.ui.palette import TradePalette, current_palette, follow_palette
from app.ui.qr import QrCodeWidget
from app.ui.widgets.copy_field import CopyField

Direction = Literal["deposit", "withdraw"]

#: Field names in words; unknown names are shown as the service sent them.
FIELD_LABELS = {
    "address": "Address",
    "method": "Method",
    "bankName": "Bank name",
    "bankAddress": "Bank address",
    "bankRoutingNumber": "Routing number (ABA)",
    "bankSwiftNumber": "SWIFT / BIC",
    "beneficiaryName": "Beneficiary name",
    "beneficiaryAddress": "Beneficiary address",
    "beneficiaryAccountNumber": "Beneficiary account number",
    "specialInstructions": "Reference / special instructions",
}
#: Fields a blockchain card already shows in its own places.
BLOCKCHAIN_SHOWN = frozenset({"asset", "assetType", "networkType", "address"})
FIAT_SHOWN = frozenset({"asset", "assetType"})

#: Brand-like colours of well-known networks; others get a stable colour from their name.
NETWORK_COLOURS = {
    "bitcoin": "#c96f00",
    "ethereum": "#4a5fc1",
    "tron": "#c4001f",
    "solana": "#7b3fd6",
}
HEADER_SCALE = 1.8


def warning_css(palette: TradePalette) -> str:
    """The warning box: the theme's text on its background tinted with the warning colour,
    framed in it (``app.ui.notices.notice_colours``, whose contrast the theme tests check)."""
    background, text, border = notice_colours("warning", palette)
    return (
        f"QLabel {{ background: {background.name()}; color: {text.name()};"
        f" border: 1px solid {border.name()}; border-radius: 3px; padding: 6px; }}"
    )


def network_label(network: str) -> str:
    """How a network is named on screen: upper case, so ``tron`` and ``TRON`` read the same."""
    return (network or "unknown network").upper()


def network_colour(network: str) -> QColor:
    known = NETWORK_COLOURS.get(network.lower())
    if known:
        return QColor(known)
    return QColor.fromHsv(zlib.crc32(network.lower().encode()) % 360, 170, 150)


def raw_text(value: object) -> str:
    """A raw field as text: strings as they are, numbers with every digit sent, anything else
    as JSON (numbers inside it as strings: json cannot write a Decimal as a number)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Decimal):
        return format_decimal(value)
    return json.dumps(
        value, default=lambda v: format_decimal(v) if isinstance(v, Decimal) else repr(v)
    )


def field_label(name: str) -> str:
    return FIELD_LABELS.get(name, name)


def _header(text: str, colour: QColor, parent: QWidget) -> QLabel:
    label = QLabel(text, parent)
    font = QFont(label.font())
    font.setBold(True)
    font.setPointSizeF(max(font.pointSizeF(), 9.0) * HEADER_SCALE)
    label.setFont(font)
    label.setStyleSheet(
        f"QLabel {{ background: {colour.name()}; color: white; padding: 6px 10px;"
        " border-radius: 3px; }"
    )
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class InstructionCard(QFrame):
    """Base of the cards: a framed box with the instruction it shows and its copy fields."""

    def __init__(self, instruction: Instruction, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("instructionCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.instruction = instruction
        #: Every Copy field of the card, by the wire name of its value.
        self.fields: dict[str, CopyField] = {}
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(8, 8, 8, 8)
        self.layout_.setSpacing(6)
        self._warnings: list[QLabel] = []
        follow_palette(self.set_palette)

    def _warning(self, text: str) -> QLabel:
        """A warning box (object name ``cardWarning``) in the theme's colours."""
        label = QLabel(text, self)
        label.setObjectName("cardWarning")
        label.setWordWrap(True)
        label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        label.setStyleSheet(warning_css(current_palette()))
        self._warnings.append(label)
        return label

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the warning boxes in the new colours."""
        for label in self._warnings:
            label.setStyleSheet(warning_css(palette))

    def _form(self) -> QFormLayout:
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.layout_.addLayout(form)
        return form

    def _add_field(
        self, form: QFormLayout, name: str, value: str, *, monospace: bool = False
    ) -> CopyField:
        label = field_label(name)
        copy = CopyField(value, label, monospace=monospace, parent=self)
        copy.setObjectName(f"field_{name}")
        form.addRow(f"{label}:", copy)
        self.fields[name] = copy
        return copy


class BlockchainCard(InstructionCard):
    """One network of one asset: header, address + Copy, QR, and the network warning."""

    def __init__(
        self,
        instruction: BlockchainInstruction,
        direction: Direction,
        other_networks: list[str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(instruction, parent)
        asset, network = instruction.asset, network_label(instruction.network_type)
        self.network = network
        what = "deposit address" if direction == "deposit" else "withdrawal address"

        self.header = _header(f"{network} network", network_colour(instruction.network_type), self)
        self.header.setObjectName("cardNetwork")
        self.subtitle = QLabel(f"{asset} {what.upper()} on the {network} network", self)
        self.subtitle.setObjectName("cardSubtitle")
        subtitle_font = QFont(self.subtitle.font())
        subtitle_font.setBold(True)
        self.subtitle.setFont(subtitle_font)
        self.layout_.addWidget(self.header)
        self.layout_.addWidget(self.subtitle)

        form = self._form()
        self.address = self._add_field(form, "address", instruction.address, monospace=True)
        self.address.setObjectName("cardAddress")
        self.address.edit.setMinimumWidth(
            self.address.edit.fontMetrics().horizontalAdvance(instruction.address) + 12
        )
        for name, value in instruction.raw.items():
            if name not in BLOCKCHAIN_SHOWN:
                self._add_field(form, name, raw_text(value), monospace=True)

        self.qr = QrCodeWidget(instruction.address, self)
        self.qr.setObjectName("cardQr")
        self.qr.setMinimumSize(self.qr.minimumSizeHint())
        self.qr_caption = QLabel(f"{network} · {asset}\n{what}", self)
        self.qr_caption.setObjectName("cardQrCaption")
        self.qr_caption.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        caption_font = QFont(self.qr_caption.font())
        caption_font.setBold(True)
        self.qr_caption.setFont(caption_font)

        self.warning = self._warning(warning_text(asset, network, direction, other_networks))

        qr_box = QVBoxLayout()
        qr_box.addWidget(self.qr, 0, Qt.AlignmentFlag.AlignHCenter)
        qr_box.addWidget(self.qr_caption)
        row = QHBoxLayout()
        row.addLayout(qr_box)
        row.addWidget(self.warning, 1, Qt.AlignmentFlag.AlignTop)
        self.layout_.addLayout(row)


def warning_text(
    asset: str, network: str, direction: Direction, other_networks: list[str] | None = None
) -> str:
    """The network warning, naming the network (and the asset's other networks, if any)."""
    others = [network_label(n) for n in other_networks or [] if network_label(n) != network]
    if direction == "deposit":
        text = (
            f"⚠ Send only {asset} on the {network} network to this address. "
            f"{asset} sent on any other network will be lost."
        )
        if others:
            text += (
                f" {asset} can also be deposited on {', '.join(others)}: use that network's own"
                " card and address."
            )
        return text
    text = (
        f"⚠ Withdrawals of {asset} on the {network} network go to this address — it is the "
        f"whitelisted destination for {network} withdrawals. Request {asset} withdrawals on "
        f"{network} only, and check the address is yours."
    )
    if others:
        text += f" {', '.join(others)} withdrawals go to a different address."
    return text


class FiatCard(InstructionCard):
    """A wire: every field the service sent, each with its own Copy button."""

    def __init__(
        self, instruction: FiatInstruction, direction: Direction, parent: QWidget | None = None
    ) -> None:
        super().__init__(instruction, parent)
        method = instruction.get("method") or "wire"
        self.header = _header(f"{instruction.asset} — {method.upper()}", QColor("#2f6f4f"), self)
        self.header.setObjectName("cardNetwork")
        self.layout_.addWidget(self.header)
        form = self._form()
        for name, value in instruction.fields:
            self._add_field(form, name, value, monospace=name.endswith("Number"))
        shown = {name for name, _ in instruction.fields} | FIAT_SHOWN
        for name, value in instruction.raw.items():
            if name not in shown:
                self._add_field(form, name, raw_text(value))
        asset = instruction.asset
        text = (
            f"⚠ Wire {asset} using exactly these details, reference included, so the funds are"
            " matched to this account."
            if direction == "deposit"
            else f"⚠ {asset} withdrawals are wired to this account. Check every detail is yours."
        )
        self.warning = self._warning(text)
        self.layout_.addWidget(self.warning)


class RawCard(InstructionCard):
    """An instruction type this version does not know: its fields as the service sent them."""

    def __init__(self, instruction: OtherInstruction, parent: QWidget | None = None) -> None:
        super().__init__(instruction, parent)
        kind = instruction.asset_type or "no type"
        self.header = _header(f"{instruction.asset or '?'} — {kind}", QColor("#5a5a5a"), self)
        self.header.setObjectName("cardNetwork")
        self.layout_.addWidget(self.header)
        note = QLabel(
            f"This instruction type ({kind!r}) is new to Tradeterm: its fields are shown exactly"
            " as the service sent them. Check them with your operations desk before use.",
            self,
        )
        note.setObjectName("cardNote")
        note.setWordWrap(True)
        self.layout_.addWidget(note)
        form = self._form()
        for name, value in instruction.raw.items():
            self._add_field(form, name, raw_text(value), monospace=True)


def build_card(
    instruction: Instruction,
    direction: Direction,
    other_networks: list[str] | None = None,
    parent: QWidget | None = None,
) -> InstructionCard:
    """The right card for any instruction (unknown types become a RawCard, never dropped)."""
    if isinstance(instruction, BlockchainInstruction):
        return BlockchainCard(instruction, direction, other_networks, parent)
    if isinstance(instruction, FiatInstruction):
        return FiatCard(instruction, direction, parent)
    return RawCard(instruction, parent)
