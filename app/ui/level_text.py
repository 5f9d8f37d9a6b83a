"""A label whose text has a level ("error", "warning", "success" or "" for ordinary text): the
status lines of the docks and the ticket's messages, shown in the level's colour and restyled
when the theme switches."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from app.domain.words import in_words
from app.ui.palette import TradePalette, level_css


def show_level(label: QLabel, text: str, level: str = "") -> None:
    """``text`` on ``label`` in the colour of ``level``; the level stays on the label (property
    "level") so a theme switch can restyle it (``restyle_level``). A request URL in ``text``
    (a failure's words) is shown as the service's host: the trader's terms, not the wire's."""
    label.setText(in_words(text))
    if label.property("level") != level:
        # A style sheet re-polishes the label (milliseconds): only when the level changes.
        label.setProperty("level", level)
        label.setStyleSheet(level_css(level))


def restyle_level(label: QLabel, palette: TradePalette) -> None:
    """A theme switch: ``label`` in the new colour of its level (ordinary text stays as it is)."""
    level = label.property("level")
    if isinstance(level, str) and level:
        label.setStyleSheet(level_css(level, palette))


def wrapped_label(parent: QWidget, name: str) -> QLabel:
    """An empty word-wrapped label named ``name`` (tests and style sheets find it by name): a
    form's message lines, whose text comes later. It flows (``flowing``): a long message
    wraps in the width the dock has, it never widens the dock."""
    label = QLabel(parent)
    label.setObjectName(name)
    return flowing(label)


def flowing(label: QLabel) -> QLabel:
    """``label`` wrapped to the width its layout gives it, its text never asking for more: a
    word-wrapped label's preferred width follows its text, and a dock whose content asks for
    more width takes it from its neighbours (a quote's terms moved every dock)."""
    label.setWordWrap(True)
    policy = label.sizePolicy()
    policy.setHorizontalPolicy(QSizePolicy.Policy.Ignored)
    label.setSizePolicy(policy)
    return label


def error_line(parent: QWidget, name: str) -> QLabel:
    """The hidden line under a form where what is wrong will be said: wrapped, error-coloured,
    its level on the label as ``show_level`` keeps it (one look for every form's error)."""
    label = wrapped_label(parent, name)
    label.setProperty("level", "error")
    label.setStyleSheet(level_css("error"))
    label.hide()
    return label
