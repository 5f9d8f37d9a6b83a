"""The Working orders dock: every parent order of the execution engine (TWAP, clip, stops,
brackets, timed, retries at the credit window), its progress, and the children of the one
selected; Pause (P), Resume or Re-arm (R) and Stop (S, after a confirmation).

The engine says which parent changed (``bridge.algoChanged``); the dock only notes the id and
asks the frame clock for a frame, and on that frame re-reads the parents that changed — one
frozen row each — and hands the table the list: only their cells are signalled, nothing is
reset (a burst of child fills costs one pass per frame).

The service has no cancel: Pause and Stop only stop new children. Stop's confirmation says so
and lists what is still out (``Parent.in_flight_words``). An armed parent's trigger lives in
this terminal (``ARMED_HERE``): the state reads "Armed here", and the note and tooltip say it.

Double-click a child: the Orders dock comes to front searching for its clientOrderId; its
context menu shows it there or in the Audit trail (``app.ui.record_intents``).
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QAction, QKeySequence, QPainter
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app.services.algos.engine import AlgoRefused, ExecutionEngine
from app.services.algos.parents import Parent
from app.services.ticket import TicketError
from app.ui.delegates import BAR_MARGIN, bar_width
from app.ui.frame_clock import shared_frame_clock
from app.ui.models.working_model import PROGRESS_ROLE, ChildrenModel, ParentRow, ParentsModel
from app.ui.palette import current_palette, level_css
from app.ui.panels.base import PanelContext
from app.ui.panels.record_parts import RecordTable

Index = QModelIndex | QPersistentModelIndex

PAUSE_KEY = "P"
RESUME_KEY = "R"
STOP_KEY = "S"
NO_CANCEL = (
    "Stop sends no more children. It never cancels a child already sent — the service has "
    "no cancel: what is out stays out until its end time and may still fill."
)


class ProgressDelegate(QStyledItemDelegate):
    """The progress cell: a bar of ``(filled, target)`` from ``PROGRESS_ROLE`` with the
    cell's text over it, in the palette's bar colour only (the utilisation bar's amber and red
    mean "near a limit"; a parent near its target is good news)."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        value = index.data(PROGRESS_ROLE)
        if not (isinstance(value, tuple) and len(value) == 2):
            super().paint(painter, option, index)
            return
        filled, target = value
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        text, opt.text = opt.text, ""
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        track = opt.rect.adjusted(BAR_MARGIN, BAR_MARGIN, -BAR_MARGIN, -BAR_MARGIN)
        if track.width() <= 0 or track.height() <= 0:
            return
        palette = current_palette()
        painter.save()
        painter.fillRect(track, palette.track)
        width = bar_width(filled, target, track.width())
        if width:
            painter.fillRect(QRect(track.left(), track.top(), width, track.height()), palette.bar)
        painter.setPen(palette.bar_text)
        painter.setFont(opt.font)
        room = track.adjusted(4, 0, -4, 0)
        elided = opt.fontMetrics.elidedText(text, Qt.TextElideMode.ElideRight, room.width())
        painter.drawText(room, int(opt.displayAlignment), elided)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        """Room for the text inside the bar's track (the table's column sizer asks this)."""
        hint = super().sizeHint(option, index)
        return QSize(hint.width() + 2 * (BAR_MARGIN + 4), hint.height())


class WorkingOrdersPanel(QWidget):
    def __init__(self, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("workingOrdersPanel")
        self._context = context
        self.engine: ExecutionEngine | None = context.bridge.algos
        self.rows: dict[str, ParentRow] = {}
        self._dirty: set[str] = set()
        self._frame_asked = False
        self.frames_drawn = 0  # frames that changed the table (tests and benchmarks)

        self.model = ParentsModel(context.precision, self)
        self.table = RecordTable("workingParents", self)
        self.table.setModel(self.model)
        self.table.setSelectionMode(RecordTable.SelectionMode.SingleSelection)
        self.progress_delegate = ProgressDelegate(self.table)
        self.table.setItemDelegateForColumn(self.model.column("progress"), self.progress_delegate)
        self.children_model = ChildrenModel(context.precision, self)
        self.children_table = RecordTable("workingChildren", self)
        self.children_table.setModel(self.children_model)
        self.children_title = QLabel("Children: select a parent", self)
        self.children_title.setObjectName("workingChildrenTitle")

        self.pause_button = self._button("&Pause", "workingPause", "Send no more children (P)")
        self.resume_button = self._button("&Resume", "workingResume", "Resume (R)")
        self.stop_button = self._button("&Stop…", "workingStop", "Stop this parent for good (S)")
        self.status = QLabel(self)
        self.status.setObjectName("workingStatus")
        # Never wider than the dock gives it (a long note must not widen the window): the
        # whole text is in its tooltip.
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.confirmation: QMessageBox | None = None

        buttons = QHBoxLayout()
        for button in (self.pause_button, self.resume_button, self.stop_button):
            buttons.addWidget(button)
        buttons.addWidget(self.status, 1)
        lower = QWidget(self)
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.children_title)
        lower_layout.addWidget(self.children_table)
        split = QSplitter(Qt.Orientation.Horizontal, self)  # the bottom row is wide and short
        split.addWidget(self.table)
        split.addWidget(lower)
        # Small minimums: the dock shares the bottom row with the record docks, and a taller
        # minimum there squeezes the tickets above it at 1280×720.
        self.table.setMinimumHeight(44)
        self.children_table.setMinimumHeight(44)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(buttons)
        layout.addWidget(split, 1)

        for key, slot in (
            (PAUSE_KEY, self.pause),
            (RESUME_KEY, self.resume),
            (STOP_KEY, self.ask_stop),
        ):
            action = QAction(self)
            action.setShortcut(QKeySequence(key))
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.triggered.connect(slot)
            self.addAction(action)
        self.pause_button.clicked.connect(self.pause)
        self.resume_button.clicked.connect(self.resume)
        self.stop_button.clicked.connect(self.ask_stop)
        self.table.selectionModel().currentRowChanged.connect(self._selected)
        self.children_table.doubleClicked.connect(self._child_chosen)
        # Right-click a child: where else it shows (its row in the orders, its audit entry).
        self.children_table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        for title, panel, name in (
            ("Show in Orders", "orders", "showChildInOrders"),
            ("Show in Audit trail", "audit", "showChildInAudit"),
        ):
            show = QAction(title, self.children_table)
            show.setObjectName(name)
            show.triggered.connect(lambda _=False, where=panel: self._show_current_child(where))
            self.children_table.addAction(show)

        self._frames = shared_frame_clock()
        self._frames.listen(self._on_frame)
        context.bridge.algoChanged.connect(self._changed)
        if self.engine is None:
            self._say("No trading in this window: parents need the trading desks", "warning")
        else:
            self._dirty.update(self.engine.parents)
            self._ask_frame()
        self._update_buttons()

    def _button(self, text: str, name: str, tip: str) -> QPushButton:
        button = QPushButton(text, self)
        button.setObjectName(name)
        button.setToolTip(tip)
        button.setAutoDefault(False)
        return button

    # -- refresh: ids noted on each change, read once per frame ----------------------------------

    def _changed(self, parent_id: str) -> None:
        self._dirty.add(parent_id)
        self._ask_frame()

    def _ask_frame(self) -> None:
        if not self._frame_asked:
            self._frame_asked = True
            self._frames.request()

    def _on_frame(self, _now: float) -> None:
        if not self._frame_asked:
            return
        self._frame_asked = False
        self.refresh()

    def refresh(self) -> None:
        """Read the parents that changed since the last frame and show them."""
        if self.engine is None:
            return
        parents = self.engine.parents
        # A parent the engine made without a change to announce (a bracket's exits) is new.
        self._dirty.update(parent_id for parent_id in parents if parent_id not in self.rows)
        dirty, self._dirty = self._dirty, set()
        if not dirty:
            return
        for parent_id in dirty:
            parent = parents.get(parent_id)
            if parent is None:
                self.rows.pop(parent_id, None)
            else:
                self.rows[parent_id] = ParentRow.of(parent)
        ordered = sorted(self.rows.values(), key=lambda r: parents[r.id].created_at, reverse=True)
        self.model.apply([(row.id, row) for row in ordered])
        self.frames_drawn += 1
        selected = self.selected_id()
        if selected is None and ordered and not self.table.currentIndex().isValid():
            self.table.selectRow(self.model.position(ordered[0].id) or 0)
        elif selected in dirty:
            self._show_children(selected)
        self._update_buttons()

    # -- selection ------------------------------------------------------------------------------

    def selected_id(self) -> str | None:
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        return self.model.record(index.row()).id

    def selected_parent(self) -> Parent | None:
        parent_id = self.selected_id()
        if parent_id is None or self.engine is None:
            return None
        return self.engine.parents.get(parent_id)

    def select(self, parent_id: str) -> None:
        row = self.model.position(parent_id)
        if row is not None:
            self.table.selectRow(row)

    def _selected(self, *_: object) -> None:
        self._show_children(self.selected_id())
        self._update_buttons()

    def _show_children(self, parent_id: str | None) -> None:
        parent = (
            None if parent_id is None or self.engine is None else self.engine.parents.get(parent_id)
        )
        self.children_model.show_parent(parent)
        if parent is None:
            self.children_title.setText("Children: select a parent")
        else:
            self.children_title.setText(
                f"Children of {self.engine.describe(parent) if self.engine else parent.id}"
                f" — {parent.in_flight_words()}"
            )

    def _update_buttons(self) -> None:
        parent = self.selected_parent()
        state = None if parent is None else parent.state
        self.pause_button.setEnabled(parent is not None and parent.live)
        self.resume_button.setEnabled(state in ("paused", "disarmed"))
        self.resume_button.setText("&Re-arm" if state == "disarmed" else "&Resume")
        self.stop_button.setEnabled(parent is not None and not parent.ended)

    # -- the trader's commands ------------------------------------------------------------------

    def pause(self) -> None:
        parent = self.selected_parent()
        if self.engine is None or parent is None or not parent.live:
            return
        self.engine.pause(parent.id)
        self._say(f"Paused: {parent.note}", "warning")

    def resume(self) -> None:
        parent = self.selected_parent()
        if self.engine is None or parent is None or parent.state not in ("paused", "disarmed"):
            return
        try:
            self.engine.resume(parent.id)
        except (AlgoRefused, TicketError) as exc:
            self._say(f"Not resumed: {exc}", "error")
            return
        self._say("Re-armed" if self.engine.parents[parent.id].spec.info.armed else "Resumed", "")

    def ask_stop(self) -> QMessageBox | None:
        """The confirmation: stop never cancels a child already sent; what is out, in words."""
        parent = self.selected_parent()
        if self.engine is None or parent is None or parent.ended:
            return None
        box = QMessageBox(self)
        box.setObjectName("stopConfirmation")
        box.setWindowTitle("Stop this parent?")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setText(f"Stop {self.engine.describe(parent)}?")
        box.setInformativeText(f"{NO_CANCEL}\n\nStill out: {parent.in_flight_words()}.")
        stop = box.addButton("Stop parent", QMessageBox.ButtonRole.AcceptRole)
        stop.setObjectName("stopParent")
        keep = box.addButton("Keep working", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        parent_id = parent.id
        box.buttonClicked.connect(lambda button: self._stop(parent_id) if button is stop else None)
        box.finished.connect(lambda _: box.deleteLater())
        box.open()
        self.confirmation = box
        return box

    def _stop(self, parent_id: str) -> None:
        if self.engine is None or parent_id not in self.engine.parents:
            return
        self.engine.stop(parent_id)
        self._say(f"Stopped: {self.engine.parents[parent_id].note}", "warning")

    def _child_chosen(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        child = self.children_model.record(index.row()).child
        self.show_child(child.client_order_id, "orders")

    def _show_current_child(self, panel: str) -> None:
        index = self.children_table.currentIndex()
        if index.isValid():
            self.show_child(self.children_model.record(index.row()).child.client_order_id, panel)

    def show_child(self, client_order_id: str, panel: str) -> None:
        """The child in the Orders dock or the audit trail, found by its clientOrderId (which
        it has from before it was sent, answered or not)."""
        self._context.records.show_in(panel, client_order_id)

    def _say(self, text: str, level: str) -> None:
        self.status.setText(text)
        self.status.setToolTip(text)
        self.status.setStyleSheet(level_css(level))

    def focus_entry(self) -> None:
        self.table.setFocus(Qt.FocusReason.ShortcutFocusReason)
