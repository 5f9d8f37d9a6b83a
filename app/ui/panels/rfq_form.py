"""The RFQ ticket's widgets and layout, and its F3 key: everything of the ticket that is only
looks. ``RfqTicketPanel`` (``rfq_ticket``) derives from ``RfqTicketForm`` and adds the behaviour
(rendering the ticket's previews, forwarding the trader's input).

F3 (anywhere in the application) shows and raises the ticket's dock and puts the cursor in the
size field with its text selected — through the form's own application-wide QShortcut, or
through the main window's Trade menu entry when the panel is registered with ``shortcut="F3"``
(then the form adds none; see ``_install_focus_shortcut``).
"""

from __future__ import annotations

import itertools

import shiboken6
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDockWidget,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.domain.display import Precision
from app.services.rfq_desk import SIDES, Side
from app.services.rfq_ticket import OVERRIDE_TEXT
from app.ui.level_text import flowing
from app.ui.palette import TradePalette, level_css
from app.ui.widgets.quote_history import QuoteHistoryModel, QuoteHistoryView
from app.ui.widgets.quote_side import QuoteSideBox
from app.ui.workspaces import FITS_AT_MINIMUM

FOCUS_KEY = "F3"
REQUEST_TIP = "Ask for a two-way quote (Enter in the size field)"


def message_css(level: str, palette: TradePalette) -> str:
    """The ticket message's style: a fill in the success colour and bold, warnings and
    errors in theirs, anything else ordinary text."""
    if level == "fill":
        return f"{level_css('success', palette)} font-weight: bold;"
    return level_css(level, palette)


def _binds(host: QWidget, keys: QKeySequence) -> bool:
    """Whether an action or shortcut under ``host`` (or on it) already answers ``keys``."""
    actions = [*host.actions(), *host.findChildren(QAction)]
    if any(keys in action.shortcuts() for action in actions):
        return True
    return any(shortcut.key() == keys for shortcut in host.findChildren(QShortcut))


class RfqTicketForm(QWidget):
    """The ticket's controls, laid out (pair, size, unit, Request; the quote's two sides, sell
    left and buy right; the message; the session's quotes), and F3."""

    _f3: QShortcut | None = None  # set before __init__ runs: a ParentChange may come first

    def __init__(self, precision: Precision, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rfqTicketPanel")
        self._build_form()
        self._build_quote(precision)
        self._lay_out()

    def _build_form(self) -> None:
        self.pair_box = QComboBox(self)
        self.pair_box.setObjectName("rfqPair")
        self.pair_box.setEditable(True)
        self.pair_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.pair_box.setAccessibleName("Pair to quote")
        self.pair_box.setToolTip("The pair to quote; follows the selected pair until you pick one")
        self.pair_box.setMinimumContentsLength(9)

        self.size_edit = QLineEdit(self)
        self.size_edit.setObjectName("rfqSize")
        self.size_edit.setPlaceholderText("Size")
        self.size_edit.setAccessibleName("Size")
        self.size_edit.setToolTip("How much to quote, in the asset on the button beside (F3)")

        self.unit_button = QToolButton(self)
        self.unit_button.setObjectName("rfqSizeUnit")
        self.unit_button.setCheckable(True)
        self.unit_button.setAccessibleName("Size asset")
        self.unit_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

        # No mnemonic: Enter in the size field requests, and Alt+R is taken elsewhere.
        self.request_button = QPushButton("Request", self)
        self.request_button.setObjectName("rfqRequest")
        self.request_button.setToolTip(REQUEST_TIP)

        self.requote_button = QPushButton("Re&quote", self)
        self.requote_button.setObjectName("rfqRequote")
        self.requote_button.setToolTip("A fresh quote for the same pair and size")

        # Shown when the size limit stops the request (or concerns the quote on screen).
        self.override_check = QCheckBox(OVERRIDE_TEXT.replace("ride", "ri&de", 1), self)
        self.override_check.setObjectName("rfqOverride")
        self.override_check.setToolTip(
            "Ask for this quote, and accept it, although it is above the size limit in Settings"
        )
        self.override_check.setVisible(False)

        self.auto_requote = QCheckBox("Auto-requote on e&xpiry", self)
        self.auto_requote.setObjectName("rfqAutoRequote")
        self.auto_requote.setToolTip(
            "Ask again when both sides expire: at most one request every 2 s, "
            "stops after 10 quotes nobody acted on"
        )

    def _build_quote(self, precision: Precision) -> None:
        self.quote_label = flowing(QLabel("No quote yet", self))
        self.quote_label.setObjectName("rfqQuote")
        self.quote_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.sides: dict[Side, QuoteSideBox] = {side: QuoteSideBox(side, self) for side in SIDES}
        self.message = flowing(QLabel(self))
        self.message.setObjectName("rfqMessage")
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setProperty("level", "")
        self.history_model = QuoteHistoryModel(self, precision=precision)
        self.history_view = QuoteHistoryView(self.history_model, self)
        self.history_view.setObjectName("rfqHistory")

    def _lay_out(self) -> None:
        form = QHBoxLayout()
        pair_label = QLabel("&Pair", self)
        pair_label.setBuddy(self.pair_box)
        size_label = QLabel("S&ize", self)  # Alt+Z is the order ticket's
        size_label.setBuddy(self.size_edit)
        form.addWidget(pair_label)
        form.addWidget(self.pair_box)
        form.addWidget(size_label)
        form.addWidget(self.size_edit, 1)
        form.addWidget(self.unit_button)
        form.addWidget(self.request_button)

        header = QHBoxLayout()
        header.addWidget(self.quote_label, 1)
        header.addWidget(self.requote_button)
        header.addWidget(self.auto_requote)

        quote = QGridLayout()
        quote.addWidget(self.sides["sell"], 0, 0)  # sell left, buy right, as FX tiles do
        quote.addWidget(self.sides["buy"], 0, 1)

        # Everything scrolls (vertically only) inside the dock: a quote's terms or a warning
        # wrapping to more lines then never asks the dock for more height, which the main
        # window took from the docks around it.
        content = QWidget(self)
        content.setObjectName("rfqContent")
        scroll = QScrollArea(self)
        scroll.setObjectName("rfqScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(content)
        scroll.setProperty(FITS_AT_MINIMUM, True)  # its texts wrap: the minimum is enough
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll, 1)
        layout = QVBoxLayout(content)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(form)
        layout.addWidget(self.override_check)
        layout.addLayout(header)
        layout.addLayout(quote)
        layout.addWidget(self.message)
        history = QLabel("Quotes this session", self)
        history.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        layout.addWidget(history)
        layout.addWidget(self.history_view, 1)

        order = [
            self.pair_box,
            self.size_edit,
            self.unit_button,
            self.request_button,
            self.override_check,
            self.sides["sell"].accept,
            self.sides["buy"].accept,
            self.requote_button,
            self.auto_requote,
            self.history_view,
        ]
        for first, second in itertools.pairwise(order):
            QWidget.setTabOrder(first, second)

    # -- F3 -------------------------------------------------------------------------------------

    def _attach_focus_shortcut(self) -> None:
        """Look for F3's owner once the docking in progress is done (next loop turn)."""
        QTimer.singleShot(0, self, self._install_focus_shortcut)

    def _install_focus_shortcut(self) -> None:
        """F3 belongs to the top-level window holding the panel, not to the panel: a widget's
        shortcuts stop working while it is hidden, and F3 must bring a closed dock back. If the
        window already binds F3 (the main window's Trade menu entry, which calls
        ``focus_entry``), the panel adds none: two bindings of one key would cancel each other
        out as ambiguous."""
        host: QWidget = self
        while (parent := host.parentWidget()) is not None:
            host = parent
        mine = self._f3 if self._f3 is not None and shiboken6.isValid(self._f3) else None
        if mine is not None and mine.parent() is host:
            return
        if mine is not None:
            mine.deleteLater()
        self._f3 = None
        if _binds(host, QKeySequence(FOCUS_KEY)):
            return
        self._f3 = QShortcut(QKeySequence(FOCUS_KEY), host)
        self._f3.setObjectName("rfqFocusShortcut")
        self._f3.setContext(Qt.ShortcutContext.ApplicationShortcut)
        self._f3.activated.connect(self.focus_ticket)
        if host is not self:
            self.destroyed.connect(self._f3.deleteLater)

    @property
    def focus_shortcut(self) -> QShortcut | None:
        """The panel's own F3 binding; None when the window binds F3 itself."""
        return self._f3 if self._f3 is not None and shiboken6.isValid(self._f3) else None

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ParentChange:
            self._attach_focus_shortcut()
        return super().event(event)

    def focus_ticket(self) -> None:
        """F3: show and raise the ticket (its dock when docked), then select the size."""
        dock = self.parentWidget()
        if isinstance(dock, QDockWidget):
            dock.show()
            dock.raise_()
            if dock.isFloating():
                dock.activateWindow()
        else:
            self.show()
            self.raise_()
            if self.isWindow():
                self.activateWindow()
        self.focus_entry()

    def focus_entry(self) -> None:
        """The cursor in the size field with its text selected (MainWindow.go_to calls this
        after showing the dock)."""
        self.size_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.size_edit.selectAll()
