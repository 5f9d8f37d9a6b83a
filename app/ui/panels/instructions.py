"""Where to send funds, and where withdrawals go: deposit and withdraw instructions per asset.

Pick Deposit or Withdraw and an asset; the panel shows one card per instruction of that asset
(one per network for a blockchain asset, every wire field for fiat, raw fields for a type this
version does not know). When an asset moves on several networks a line above the cards says so,
and each card's warning names the others. Both lists are read together when the panel opens
and on Refresh; the chosen direction and asset are remembered in the settings. The error line
and the chosen direction take the theme's colours and follow a theme switch.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.services.log_events import LogLevel
from app.services.transfers import (
    Direction,
    InstructionBook,
    TransferError,
)
from app.ui.level_text import error_line
from app.ui.palette import TradePalette, current_palette, follow_palette, level_css
from app.ui.panels.base import PanelContext
from app.ui.tasks import TaskOwner
from app.ui.widgets.instruction_card import InstructionCard, build_card, network_label

DIRECTION_KEY = "instructions/direction"
ASSET_KEY = "instructions/asset"


def direction_css(palette: TradePalette) -> str:
    """The chosen direction must be obvious at a glance (deposit and withdraw addresses
    differ): filled like a bar, its text in the colour made to read on the bar, framed in the
    rising blue."""
    return (
        "QToolButton { padding: 3px 10px; }"
        f" QToolButton:checked {{ background: {palette.bar.name()};"
        f" color: {palette.bar_text.name()}; font-weight: bold;"
        f" border: 1px solid {palette.up.name()}; border-radius: 3px; }}"
    )


def summary_text(book: InstructionBook, direction: Direction, asset: str) -> str:
    """One line above the cards: how many ways this asset moves in this direction."""
    verb = "Deposit" if direction == "deposit" else "Withdraw"
    networks = [network_label(n) for n in book.networks(direction, asset)]
    if len(networks) > 1:
        return (
            f"{verb} {asset} on {len(networks)} networks: {', '.join(networks)}. Each network has"
            " its own address — use the card of the network you send on."
        )
    if not book.for_asset(direction, asset):
        return f"No {direction} instructions for {asset}."
    return ""


class InstructionsPanel(QWidget):
    def __init__(self, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("instructionsPanel")
        self._context = context
        self._bridge = context.bridge
        self.tasks = TaskOwner(self, self._task_failed)
        self.book = InstructionBook()
        self.cards: list[InstructionCard] = []
        self._loaded = False

        self.deposit_button = self._direction_button("Deposit", "directionDeposit")
        self.withdraw_button = self._direction_button("Withdraw", "directionWithdraw")
        self.direction_group = QButtonGroup(self)
        self.direction_group.setExclusive(True)
        self.direction_group.addButton(self.deposit_button)
        self.direction_group.addButton(self.withdraw_button)
        saved = str(context.settings.value(DIRECTION_KEY, "deposit") or "deposit")
        (self.withdraw_button if saved == "withdraw" else self.deposit_button).setChecked(True)
        self.direction_group.buttonToggled.connect(self._direction_toggled)

        self.asset_box = QComboBox(self)
        self.asset_box.setObjectName("instructionAsset")
        self.asset_box.setToolTip("Asset to show instructions for")
        self.asset_box.setMinimumContentsLength(6)
        self.asset_box.currentTextChanged.connect(self._asset_chosen)

        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.setObjectName("instructionsRefresh")
        self.refresh_button.clicked.connect(self.reload)

        self.summary = QLabel(self)
        self.summary.setObjectName("instructionsSummary")
        self.summary.setWordWrap(True)
        font = self.summary.font()
        font.setBold(True)
        self.summary.setFont(font)
        self.error_label = error_line(self, "instructionsError")

        self.cards_host = QWidget(self)
        self.cards_host.setObjectName("instructionCards")
        self.cards_layout = QVBoxLayout(self.cards_host)
        self.cards_layout.setContentsMargins(0, 0, 0, 0)
        self.cards_layout.addStretch(1)
        self.scroll_area = QScrollArea(self)
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setWidget(self.cards_host)

        top = QHBoxLayout()
        top.addWidget(self.deposit_button)
        top.addWidget(self.withdraw_button)
        top.addSpacing(12)
        asset_label = QLabel("&Asset:", self)
        asset_label.setBuddy(self.asset_box)
        top.addWidget(asset_label)
        top.addWidget(self.asset_box)
        top.addStretch(1)
        top.addWidget(self.refresh_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.error_label)
        layout.addWidget(self.summary)
        layout.addWidget(self.scroll_area, 1)
        self.setTabOrder(self.deposit_button, self.withdraw_button)
        self.setTabOrder(self.withdraw_button, self.asset_box)
        self.setTabOrder(self.asset_box, self.refresh_button)
        self.setTabOrder(self.refresh_button, self.scroll_area)

        follow_palette(self.set_palette)
        self.reload()

    def _direction_button(self, text: str, name: str) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setObjectName(name)
        button.setCheckable(True)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        button.setStyleSheet(direction_css(current_palette()))
        return button

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the error line and the direction buttons (the cards restyle
        themselves)."""
        self.error_label.setStyleSheet(level_css("error", palette))
        for button in (self.deposit_button, self.withdraw_button):
            button.setStyleSheet(direction_css(palette))

    # -- state ------------------------------------------------------------------------------

    @property
    def direction(self) -> Direction:
        return "withdraw" if self.withdraw_button.isChecked() else "deposit"

    def set_direction(self, direction: Direction) -> None:
        (self.withdraw_button if direction == "withdraw" else self.deposit_button).setChecked(True)

    @property
    def asset(self) -> str:
        return self.asset_box.currentText()

    def set_asset(self, asset: str) -> None:
        self.asset_box.setCurrentText(asset)

    @property
    def loaded(self) -> bool:
        """True once an answer (instructions or an error) has been shown."""
        return self._loaded

    # -- loading ----------------------------------------------------------------------------

    def reload(self) -> None:
        self.refresh_button.setEnabled(False)
        self.tasks.spawn(self._load(), "reading transfer instructions")

    async def _load(self) -> None:
        try:
            book = await self._bridge.feeds.instructions()
        except TransferError as exc:
            self._show_error(str(exc))
        else:
            self.set_book(book)
        finally:
            self.refresh_button.setEnabled(True)

    def set_book(self, book: InstructionBook) -> None:
        """Show ``book`` (the service's instructions), keeping the chosen asset if it is there."""
        self.book = book
        self._loaded = True
        errors = [e for e in (book.deposit_error, book.withdraw_error) if e]
        self.error_label.setText("\n".join(errors))
        self.error_label.setVisible(bool(errors))
        wanted = self.asset or str(self._context.settings.value(ASSET_KEY, "") or "")
        assets = book.assets()
        blocked = self.asset_box.blockSignals(True)
        try:
            self.asset_box.clear()
            self.asset_box.addItems(assets)
            if wanted in assets:
                self.asset_box.setCurrentText(wanted)
        finally:
            self.asset_box.blockSignals(blocked)
        self._show_cards()

    def _show_error(self, message: str) -> None:
        self._loaded = True
        self.error_label.setText(f"{message}. Press Refresh to try again.")
        self.error_label.setVisible(True)
        self._context.notify(LogLevel.WARNING, message)

    def _task_failed(self, what: str, exc: BaseException) -> None:
        self.refresh_button.setEnabled(True)
        self._show_error(f"{what} failed: {exc}")

    # -- reactions --------------------------------------------------------------------------

    def _direction_toggled(self, _button: object, checked: bool) -> None:
        if not checked:
            return
        self._context.settings.setValue(DIRECTION_KEY, self.direction)
        self._show_cards()

    def _asset_chosen(self, asset: str) -> None:
        if asset:
            self._context.settings.setValue(ASSET_KEY, asset)
        self._show_cards()

    def _show_cards(self) -> None:
        for card in self.cards:
            self.cards_layout.removeWidget(card)
            card.deleteLater()
        self.cards = []
        direction, asset = self.direction, self.asset
        self.summary.setText(summary_text(self.book, direction, asset) if asset else "")
        self.summary.setVisible(bool(self.summary.text()))
        networks = self.book.networks(direction, asset)
        for instruction in self.book.for_asset(direction, asset):
            card = build_card(instruction, direction, networks, self.cards_host)
            self.cards_layout.insertWidget(self.cards_layout.count() - 1, card)
            card.show()  # now, not on the layout's queued show: the panel is already visible
            self.cards.append(card)
