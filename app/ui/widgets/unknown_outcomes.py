"""The blotter's strip of orders and accepts whose outcome is not known: hidden while
there are none; else one line each, in the warning colour, with a "Dismiss…" button that first
tells the trader the facts (what was sent, when, what was last known, that dismissing cancels
nothing). The service behind it keeps looking for each one until the server shows it.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.services.unknown_outcomes import Unknown, UnknownOutcomes
from app.ui.bridge import QtTopic
from app.ui.palette import TradePalette, follow_palette, level_css

#: Lines shown at most; the rest are counted (the strip must not push the table off screen).
MAX_LINES = 3


class UnknownOutcomesStrip(QFrame):
    def __init__(self, outcomes: UnknownOutcomes, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("unknownOutcomes")
        self.outcomes = outcomes
        self.shown: tuple[Unknown, ...] = ()
        self.lines: list[QLabel] = []
        self.dismiss_buttons: list[QPushButton] = []
        self.box: QMessageBox | None = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(4, 2, 4, 2)
        self._layout.setSpacing(2)
        self.heading = QLabel(self)
        self.heading.setObjectName("unknownOutcomesHeading")
        self.heading.setWordWrap(True)
        self._layout.addWidget(self.heading)
        self.more = QLabel(self)
        self.more.setObjectName("unknownOutcomesMore")
        self._layout.addWidget(self.more)
        self.changes: QtTopic[tuple[Unknown, ...]] = QtTopic(outcomes.changed, self)
        self.changes.connect(self.show_unknowns)
        self.show_unknowns(outcomes.current)
        follow_palette(self.set_palette)

    def show_unknowns(self, unknowns: tuple[Unknown, ...]) -> None:
        """One line per unknown (the first ``MAX_LINES``); hidden when there is none."""
        self.shown = unknowns
        for widget in (*self.lines, *self.dismiss_buttons):
            widget.deleteLater()
        self.lines, self.dismiss_buttons = [], []
        self.setVisible(bool(unknowns))
        count = len(unknowns)
        noun = "order or accept" if count == 1 else "orders or accepts"
        self.heading.setText(
            f"⚠ {count} {noun} with an unknown outcome: it may have reached the server, so it "
            "is not called failed — still looking for it there"
        )
        for unknown in unknowns[:MAX_LINES]:
            self._add_line(unknown)
        hidden = count - MAX_LINES
        self.more.setVisible(hidden > 0)
        self.more.setText(f"… and {hidden} more (the log lists them)" if hidden > 0 else "")
        self.set_palette(None)

    def _add_line(self, unknown: Unknown) -> None:
        row = QHBoxLayout()
        label = QLabel(
            f"{unknown.what} · sent {unknown.sent_at:%H:%M:%S} UTC · {unknown.detail}", self
        )
        label.setObjectName("unknownOutcome")
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        button = QPushButton("Dismiss…", self)
        button.setObjectName("dismissUnknown")
        button.setAccessibleName(f"Dismiss {unknown.what}")
        button.setToolTip("Stop looking for it (cancels nothing on the server)")
        button.clicked.connect(lambda: self.ask_dismiss(unknown))
        row.addWidget(label, 1)
        row.addWidget(button)
        self._layout.insertLayout(self._layout.count() - 1, row)
        self.lines.append(label)
        self.dismiss_buttons.append(button)

    def ask_dismiss(self, unknown: Unknown) -> QMessageBox:
        """The facts first; "Keep looking" is the default (Enter and Escape keep it)."""
        box = QMessageBox(self)
        box.setObjectName("dismissUnknownConfirmation")
        box.setWindowTitle("Dismiss an unknown outcome?")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setText(html.escape(unknown.facts()).replace("\n", "<br>"))
        dismiss = box.addButton("&Dismiss", QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton("&Keep looking", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.setWindowModality(Qt.WindowModality.WindowModal)

        def clicked(button: QAbstractButton) -> None:
            if button is dismiss:
                self.outcomes.dismiss(unknown.client_order_id)

        box.buttonClicked.connect(clicked)
        if self.box is not None:
            self.box.deleteLater()  # the last one asked (kept until now for a test to read)
        self.box = box
        box.open()
        return box

    def set_palette(self, palette: TradePalette | None) -> None:
        """The warning colour of the theme in force."""
        for label in (self.heading, *self.lines, self.more):
            label.setStyleSheet(level_css("warning", palette))
