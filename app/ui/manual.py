"""The user guide inside the terminal: Help > User guide and F1.

The guide is the Markdown pages of ``resources/manual/`` (``app.resources.manual_folder``), the
same files a reader of the repository sees, shown in a ``QTextBrowser`` beside a table of
contents. A section is named as GitHub names a heading's anchor (``slug``), so the links between
pages work both on the web and here. Qt's Markdown reader makes no anchors of headings, so the
viewer finds a section's heading block itself and scrolls it to the top.

F1 opens the section of the panel that has the keyboard focus: ``PANEL_HELP`` maps each dock's
name to its page and anchor (a test holds every entry to a heading that exists). A missing
folder or page is said on the page in words, never raised.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QTextBlock, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QDockWidget,
    QHBoxLayout,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from app import resources


@dataclass(frozen=True)
class Section:
    """A page of the guide and a heading's anchor on it ("" for the page's top)."""

    page: str
    anchor: str = ""


#: The pages in reading order, with the titles the table of contents shows (each page's own
#: first heading; a test holds them equal).
PAGES: tuple[tuple[str, str], ...] = (
    ("index.md", "Tradeterm user guide"),
    ("terminal.md", "Starting and the window"),
    ("ticket.md", "The order ticket (F2)"),
    ("rfq.md", "The RFQ ticket (F3)"),
    ("algos.md", "Algos and working orders"),
    ("risk.md", "Risk limits and the kill switch"),
    ("records.md", "Records"),
    ("positions.md", "Positions and P&L"),
    ("alerts.md", "Price alerts"),
    ("settings.md", "Settings, themes, notifications and files"),
    ("keyboard.md", "Keyboard shortcuts"),
    ("sandbox.md", "The embedded sandbox"),
    ("cli.md", "The command line"),
)
CONTENTS = Section("index.md")

#: F1: the section of each panel (the dock's name, as ``MainWindow.docks`` keys it).
PANEL_HELP: dict[str, Section] = {
    "topOfBook": Section("terminal.md", "the-watchlist"),
    "balances": Section("terminal.md", "balances"),
    "orderTicket": Section("ticket.md", "the-order-ticket-f2"),
    "rfqTicket": Section("rfq.md", "the-rfq-ticket-f3"),
    "algoTicket": Section("algos.md", "the-algo-ticket-f4"),
    "chart": Section("terminal.md", "the-chart"),
    "depth": Section("ticket.md", "the-depth-ladder"),
    "orders": Section("records.md", "orders"),
    "workingOrders": Section("algos.md", "working-orders-ctrlshiftw"),
    "ledger": Section("records.md", "ledger"),
    "deposits": Section("records.md", "deposits"),
    "instructions": Section("records.md", "deposit-and-withdraw-instructions"),
    "positions": Section("positions.md", "the-positions-dock-ctrl9"),
    "audit": Section("records.md", "the-audit-trail"),
    "alerts": Section("alerts.md", "the-alerts-dock-ctrlshifta"),
    "log": Section("terminal.md", "notices-and-the-log"),
}

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to
    hyphens ("Positions and P&L" -> "positions-and-pl")."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def plain(markdown: str) -> str:
    """A heading's text as it reads: links to their words, no code ticks or emphasis marks."""
    return _LINK.sub(r"\1", markdown).replace("`", "").replace("**", "").replace("__", "")


def headings(markdown: str, level: int = 2) -> list[tuple[str, str]]:
    """(text, anchor) of the page's headings of ``level``, outside code blocks."""
    found: list[tuple[str, str]] = []
    fenced = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match and len(match.group(1)) == level:
            text = plain(match.group(2))
            found.append((text, slug(text)))
    return found


def heading_block(document: QTextDocument, anchor: str) -> QTextBlock | None:
    """The rendered heading whose anchor is ``anchor`` (None when there is none)."""
    block = document.begin()
    while block.isValid():
        if block.blockFormat().headingLevel() > 0 and slug(block.text()) == anchor:
            return block
        block = block.next()
    return None


def section_for(panel: str | None) -> Section:
    """The guide's section for a panel; the contents for no panel or one not mapped."""
    return PANEL_HELP.get(panel or "", CONTENTS)


def panel_with_focus(docks: Mapping[str, QDockWidget], focus: QWidget | None) -> str | None:
    """The name of the dock that holds ``focus`` (None when no dock does)."""
    if focus is None:
        return None
    for name, dock in docks.items():
        if focus is dock or dock.isAncestorOf(focus):
            return name
    return None


def help_section(
    docks: Mapping[str, QDockWidget], focus: QWidget | None, viewer: QWidget | None
) -> Section:
    """F1's section: the focused panel's; the one already shown when the focus is in the
    guide itself (F1 there changes nothing)."""
    if isinstance(viewer, ManualViewer) and focus is not None and viewer.isAncestorOf(focus):
        return viewer.section
    return section_for(panel_with_focus(docks, focus))


def missing_text(folder: Path, page: str) -> str:
    """What the trader reads when a page cannot be shown, and what to do about it."""
    where = folder if not folder.is_dir() else folder / page
    return (
        "# The user guide is not here\n\n"
        f"The terminal looked for `{where}` and did not find it. Reinstall Tradeterm: its "
        "`resources/manual` folder is missing or incomplete. Everything else works without "
        "it; the same guide is in the project's repository, under `resources/manual/`.\n"
    )


class ManualViewer(QDialog):
    """The guide: a table of contents (pages and their sections) and the page shown.

    Not modal: the trader reads beside the terminal. ``show_section`` moves to a page and a
    heading; ``section`` and ``problem`` say what is shown (``problem``: why a page could not
    be, else "")."""

    def __init__(self, parent: QWidget | None = None, folder: Path | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("manual")
        self.setWindowTitle("Tradeterm user guide")
        self.folder = folder if folder is not None else resources.manual_folder()
        self.section = CONTENTS
        self.problem = ""
        self._shown: str | None = None  # the page whose text the browser holds
        self._items: dict[Section, QTreeWidgetItem] = {}  # the contents' entry of each section
        self.contents = QTreeWidget(self)
        self.contents.setObjectName("manualContents")
        self.contents.setHeaderHidden(True)
        self.contents.itemActivated.connect(self._picked)
        self.contents.itemClicked.connect(self._picked)
        self.browser = QTextBrowser(self)
        self.browser.setObjectName("manualPage")
        self.browser.setOpenLinks(False)  # links between pages go through ``show_section``
        self.browser.anchorClicked.connect(self._follow)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.contents)
        splitter.addWidget(self.browser)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([240, 660])
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(splitter)
        self.resize(900, 600)  # inside a 1280×720 screen with the window's title bar
        self._fill_contents()

    def _fill_contents(self) -> None:
        """A top-level item per page, its ``##`` sections under it (read from the files; a
        page that cannot be read lists no sections)."""
        for page, title in PAGES:
            item = QTreeWidgetItem([title])
            item.setData(0, Qt.ItemDataRole.UserRole, Section(page))
            self._items[Section(page)] = item
            for text, anchor in headings(self._read(page) or ""):
                child = QTreeWidgetItem([text])
                child.setData(0, Qt.ItemDataRole.UserRole, Section(page, anchor))
                self._items.setdefault(Section(page, anchor), child)
                item.addChild(child)
            self.contents.addTopLevelItem(item)

    def _read(self, page: str) -> str | None:
        try:
            return (self.folder / page).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def open_at(self, section: Section) -> None:
        """Show the window, active (which brings it to the front), at ``section``."""
        self.show()
        self.activateWindow()
        self.show_section(section)

    def show_section(self, section: Section) -> bool:
        """Show ``section``'s page with its heading at the top; False, with the reason on the
        page, when the page cannot be read. An anchor the page lacks shows the page's top."""
        text = self._read(section.page)
        if text is None:
            self.problem = f"no {section.page} in {self.folder}"
            self.browser.setMarkdown(missing_text(self.folder, section.page))
            self._shown = None
            self.section = section
            return False
        self.problem = ""
        if self._shown != section.page:
            self.browser.setMarkdown(text)
            self._shown = section.page
        self.section = section
        self._scroll_to(section.anchor)
        self._mark_in_contents(section)
        return True

    def _scroll_to(self, anchor: str) -> None:
        block = heading_block(self.browser.document(), anchor) if anchor else None
        if block is None:
            self.browser.moveCursor(QTextCursor.MoveOperation.Start)
            self.browser.verticalScrollBar().setValue(0)
            return
        self.browser.setTextCursor(QTextCursor(block))
        layout = self.browser.document().documentLayout()
        self.browser.verticalScrollBar().setValue(int(layout.blockBoundingRect(block).top()))

    def _mark_in_contents(self, section: Section) -> None:
        """Select the contents entry of ``section`` (its page's when the section has none)."""
        item = self._items.get(section) or self._items.get(Section(section.page))
        if item is not None:
            self.contents.blockSignals(True)
            self.contents.setCurrentItem(item)
            self.contents.blockSignals(False)

    def _picked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        section = item.data(0, Qt.ItemDataRole.UserRole)
        if isinstance(section, Section):
            self.show_section(section)

    def _follow(self, url: QUrl) -> None:
        """A link: another page of the guide (``page.md#anchor``), a heading of this page
        (``#anchor``), or a web address for the browser."""
        if url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)
            return
        page = Path(url.path()).name or self.section.page
        self.show_section(Section(page, url.fragment()))
