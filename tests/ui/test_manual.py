"""The user guide inside the terminal: Help > User guide opens it at its contents, F1 opens the
section of the panel that has the focus (real keys in the whole terminal on the live sandbox),
every panel's section exists, links between pages work, and a missing guide is said in words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QTextCursor, QTextDocument
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QTreeWidgetItem, QWidget
from pytestqt.qtbot import QtBot

from app import resources
from app.ui.launch import default_panels
from app.ui.main_window import MainWindow
from app.ui.manual import (
    CONTENTS,
    PAGES,
    PANEL_HELP,
    ManualViewer,
    Section,
    heading_block,
    headings,
    panel_with_focus,
    slug,
)
from app.ui.panels.depth import DepthPanel
from app.ui.panels.order_ticket import OrderTicketPanel
from tests.helpers.live import Live

FOLDER = resources.manual_folder()
WAIT_MS = 10_000


@pytest.fixture
def terminal(qtbot: QtBot, live: Live, app: QApplication) -> Iterator[MainWindow]:
    """The terminal's window with every panel, on the live sandbox, active."""
    window = MainWindow(live.context, default_panels(live.desks), "9.9.9")
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=WAIT_MS)
    yield window
    if window.manual is not None:
        window.manual.close()
    window.close()


def help_action(window: MainWindow, name: str) -> QAction:
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        if isinstance(menu, QMenu) and menu_action.text().replace("&", "") == "Help":
            return next(action for action in menu.actions() if action.objectName() == name)
    raise AssertionError("no Help menu")


def rendered(page: str) -> QTextDocument:
    document = QTextDocument()
    document.setMarkdown((FOLDER / page).read_text(encoding="utf-8"))
    return document


def heading_at_top(viewer: ManualViewer) -> str:
    """The text of the heading the page is scrolled to (its block at the viewport's top), or
    of the section's heading when the page cannot scroll that far (near its end)."""
    anchor = viewer.section.anchor
    block = heading_block(viewer.browser.document(), anchor)
    assert block is not None, f"no heading {anchor!r} shown"
    top = viewer.browser.document().documentLayout().blockBoundingRect(block).top()
    bar = viewer.browser.verticalScrollBar()
    assert bar.value() == min(int(top), bar.maximum()), (bar.value(), top, bar.maximum())
    return block.text()


def item(found: QTreeWidgetItem | None) -> QTreeWidgetItem:
    assert found is not None
    return found


def focus_in(qtbot: QtBot, widget: QWidget) -> None:
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget, timeout=WAIT_MS)


# -- Help > User guide ----------------------------------------------------------------------------


def test_user_guide_opens_the_viewer_at_its_contents(qtbot: QtBot, terminal: MainWindow) -> None:
    help_action(terminal, "userGuide").trigger()
    viewer = terminal.manual
    assert viewer is not None
    qtbot.waitUntil(viewer.isVisible, timeout=WAIT_MS)
    assert viewer.section == CONTENTS and viewer.problem == ""
    assert viewer.browser.document().firstBlock().text() == "Tradeterm user guide"
    # the table of contents: every page in reading order, each with its sections
    contents = viewer.contents
    pages = [item(contents.topLevelItem(i)) for i in range(contents.topLevelItemCount())]
    assert [page.text(0) for page in pages] == [title for _, title in PAGES]
    ticket = pages[[page for page, _ in PAGES].index("ticket.md")]
    sections = [item(ticket.child(i)) for i in range(ticket.childCount())]
    names = [section.text(0) for section in sections]
    assert "The depth ladder" in names and "Click-to-trade" in names
    # a click on a section in the contents shows it
    ticket.setExpanded(True)
    entry = sections[names.index("Click-to-trade")]
    contents.scrollToItem(entry)
    spot = contents.visualItemRect(entry).center()
    QTest.mouseClick(contents.viewport(), Qt.MouseButton.LeftButton, pos=spot)
    qtbot.waitUntil(lambda: viewer.section == Section("ticket.md", "click-to-trade"))
    assert heading_at_top(viewer) == "Click-to-trade"
    assert viewer.browser.verticalScrollBar().value() > 0
    # the menu entry again: back to the contents, one viewer
    help_action(terminal, "userGuide").trigger()
    assert terminal.manual is viewer and viewer.section == CONTENTS
    assert viewer.browser.verticalScrollBar().value() == 0


def test_a_link_in_a_page_opens_the_page_it_names(qtbot: QtBot, terminal: MainWindow) -> None:
    viewer = terminal.show_manual(CONTENTS)
    qtbot.waitUntil(viewer.isVisible, timeout=WAIT_MS)
    browser = viewer.browser
    found = browser.document().find("The order ticket (F2)")
    assert not found.isNull()
    # the middle of the link's text, where the trader clicks
    middle = QTextCursor(found)
    middle.setPosition((found.selectionStart() + found.selectionEnd()) // 2)
    spot = browser.cursorRect(middle).center()
    QTest.mouseClick(browser.viewport(), Qt.MouseButton.LeftButton, pos=spot)
    qtbot.waitUntil(lambda: viewer.section.page == "ticket.md", timeout=WAIT_MS)
    assert browser.document().firstBlock().text() == "The order ticket (F2)"


# -- F1 -------------------------------------------------------------------------------------------


def test_f1_in_the_order_ticket_opens_the_ticket_section(
    qtbot: QtBot, terminal: MainWindow
) -> None:
    ticket = terminal.docks["orderTicket"].widget()
    assert isinstance(ticket, OrderTicketPanel)
    terminal.go_to("orderTicket")
    focus_in(qtbot, ticket.size_edit)
    QTest.keyClick(ticket.size_edit, Qt.Key.Key_F1)
    qtbot.waitUntil(lambda: terminal.manual is not None and terminal.manual.isVisible())
    viewer = terminal.manual
    assert viewer is not None
    assert (
        viewer.section == PANEL_HELP["orderTicket"] == Section("ticket.md", "the-order-ticket-f2")
    )
    assert heading_at_top(viewer) == "The order ticket (F2)"
    current = viewer.contents.currentItem()
    assert current is not None and current.text(0) == "The order ticket (F2)"
    # F1 in the guide itself keeps the section shown
    QTest.keyClick(viewer.browser, Qt.Key.Key_F1)
    assert viewer.section == PANEL_HELP["orderTicket"]


def test_f1_follows_the_focus_to_another_panel(qtbot: QtBot, terminal: MainWindow) -> None:
    """Ctrl+4 puts the focus in the depth ladder (tabbed behind the chart at first); F1 then
    opens the ladder's section, well down its page."""
    depth = terminal.docks["depth"].widget()
    assert isinstance(depth, DepthPanel)
    terminal.log_panel.view.setFocus()
    focus_in(qtbot, terminal.log_panel.view)
    QTest.keyClick(terminal.log_panel.view, Qt.Key.Key_F1)
    qtbot.waitUntil(lambda: terminal.manual is not None and terminal.manual.isVisible())
    viewer = terminal.manual
    assert viewer is not None and viewer.section == PANEL_HELP["log"]
    terminal.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is terminal, timeout=WAIT_MS)
    QTest.keyClick(terminal, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: panel_with_focus(terminal.docks, QApplication.focusWidget()) == "depth")
    focus = QApplication.focusWidget()
    assert focus is not None and depth.isAncestorOf(focus)
    QTest.keyClick(focus, Qt.Key.Key_F1)
    qtbot.waitUntil(lambda: viewer.section == PANEL_HELP["depth"], timeout=WAIT_MS)
    assert heading_at_top(viewer) == "The depth ladder"
    assert viewer.browser.verticalScrollBar().value() > 0
    assert terminal.manual is viewer  # one viewer, moved


def test_f1_is_listed_in_the_keyboard_shortcuts(terminal: MainWindow) -> None:
    keys = dict(terminal.shortcut_list())
    assert keys["F1"] == "Help > Help on this panel"
    assert keys["Shift+F1"] == "Help > Keyboard shortcuts"
    assert [k for k, _ in terminal.shortcut_list()].count("F1") == 1


@pytest.mark.slow
def test_every_panel_has_a_section_in_the_guide(qtbot: QtBot, terminal: MainWindow) -> None:
    assert set(terminal.docks) == set(PANEL_HELP)
    viewer = terminal.show_manual(CONTENTS)
    qtbot.waitUntil(viewer.isVisible, timeout=WAIT_MS)
    for name, section in PANEL_HELP.items():
        assert (FOLDER / section.page).is_file(), f"{name}: no page {section.page}"
        assert heading_block(rendered(section.page), section.anchor) is not None, name
        assert viewer.show_section(section), name
        assert slug(heading_at_top(viewer)) == section.anchor


# -- the pages themselves -------------------------------------------------------------------------


def test_the_pages_their_titles_sections_and_links_agree() -> None:
    """Each page's first heading is its title in the contents; every section in the contents
    and every link between pages leads to a heading that exists (as rendered)."""
    on_disk = sorted(path.name for path in FOLDER.glob("*.md"))
    assert on_disk == sorted(page for page, _ in PAGES)
    anchors: dict[str, set[str]] = {}
    for page, title in PAGES:
        document = rendered(page)
        assert document.firstBlock().text() == title
        assert document.firstBlock().blockFormat().headingLevel() == 1
        found = set()
        block = document.begin()
        while block.isValid():
            if block.blockFormat().headingLevel():
                found.add(slug(block.text()))
            block = block.next()
        anchors[page] = found
    for page, _ in PAGES:
        text = (FOLDER / page).read_text(encoding="utf-8")
        for _, anchor in headings(text):
            assert anchor in anchors[page], f"{page}: contents entry #{anchor}"
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
            assert (target or page) in anchors, f"{page}: link to {target}"
            assert not anchor or anchor in anchors[target or page], f"{page}: #{anchor}"


def test_slugs_are_githubs() -> None:
    assert slug("The order ticket (F2)") == "the-order-ticket-f2"
    assert slug("Positions and P&L") == "positions-and-pl"
    assert slug("Working orders (Ctrl+Shift+W)") == "working-orders-ctrlshiftw"
    assert headings("# T\n\n```\n## not one\n```\n## The `tradeterm algo`\n") == [
        ("The tradeterm algo", "the-tradeterm-algo")
    ]


# -- a guide that is not there --------------------------------------------------------------------


def test_a_missing_manual_folder_is_said_in_words(qtbot: QtBot, tmp_path: Path) -> None:
    gone = tmp_path / "manual"
    viewer = ManualViewer(folder=gone)
    qtbot.addWidget(viewer)
    viewer.open_at(CONTENTS)
    qtbot.waitUntil(viewer.isVisible)
    text = viewer.browser.toPlainText()
    assert "The user guide is not here" in text
    assert str(gone) in text and "Reinstall Tradeterm" in text
    assert viewer.problem == f"no index.md in {gone}"
    # the contents still lists the pages; picking one says the same, nothing is raised
    assert viewer.contents.topLevelItemCount() == len(PAGES)
    assert not viewer.show_section(PANEL_HELP["orderTicket"])
    assert "The user guide is not here" in viewer.browser.toPlainText()


def test_a_missing_page_is_said_in_words(qtbot: QtBot, tmp_path: Path) -> None:
    (tmp_path / "index.md").write_text("# Tradeterm user guide\n\nOnly this page.\n")
    viewer = ManualViewer(folder=tmp_path)
    qtbot.addWidget(viewer)
    viewer.open_at(CONTENTS)
    assert viewer.problem == "" and "Only this page." in viewer.browser.toPlainText()
    assert not viewer.show_section(Section("ticket.md", "the-depth-ladder"))
    text = viewer.browser.toPlainText()
    assert str(tmp_path / "ticket.md") in text and "Reinstall Tradeterm" in text
    # and back to a page that is there
    assert viewer.show_section(CONTENTS)
    assert "Only this page." in viewer.browser.toPlainText()
