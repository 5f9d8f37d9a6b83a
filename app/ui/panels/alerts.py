"""The Alerts panel: the trader's price alerts, listed, made, edited, re-armed and deleted.

New… opens the alert dialog (``app.ui.alert_dialog``) for the traded pair; Edit… (or Enter, or
a double-click on a row) opens it with the alert's terms; Re-arm arms a once alert that has
fired; Delete (or the Delete key) removes the highlighted alert. Alerts are also made from the
watchlist's context menu (``app.ui.panels.top_of_book``).

The alerts live in the session (``app.services.alerts``, evaluated on every top-of-book poll);
this panel keeps them in the settings file: read once, when the first panel is built for a
session, and written after every change (``priceAlerts/<n>/<field>``, every value as text,
Decimals exact), so they survive a restart with what they have seen (armed or fired, the side
of the level the price was on). An entry that cannot be read is skipped with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSettings, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractItemView, QToolBar, QVBoxLayout, QWidget

from app.domain.alerts import PriceAlert
from app.domain.errors import ParseError
from app.services.log_events import LogLevel
from app.ui.alert_dialog import AlertDialog, open_alert_dialog
from app.ui.models.alerts_model import AlertsModel
from app.ui.panels.base import PanelContext
from app.ui.widgets.list_table import ListTable
from app.ui.widgets.read_only_table import read_only_rows, widen_to_fit

SETTINGS_GROUP = "priceAlerts"

Index = QModelIndex | QPersistentModelIndex


def read_alerts(settings: QSettings) -> tuple[list[PriceAlert], int]:
    """The stored alerts, and how many entries could not be read."""
    alerts: list[PriceAlert] = []
    unreadable = 0
    count = settings.beginReadArray(SETTINGS_GROUP)
    try:
        for number in range(count):
            settings.setArrayIndex(number)
            fields = {key: settings.value(key, "") for key in settings.childKeys()}
            try:
                alerts.append(PriceAlert.from_fields(fields))
            except (ParseError, ValueError):
                unreadable += 1
    finally:
        settings.endArray()
    return alerts, unreadable


def write_alerts(settings: QSettings, alerts: Sequence[PriceAlert]) -> None:
    """Every alert, replacing what was stored."""
    settings.remove(SETTINGS_GROUP)
    settings.beginWriteArray(SETTINGS_GROUP, len(alerts))
    for number, alert in enumerate(alerts):
        settings.setArrayIndex(number)
        for key, value in alert.to_fields().items():
            settings.setValue(key, value)
    settings.endArray()
    settings.sync()


class AlertsPanel(QWidget):
    def __init__(self, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("alertsPanel")
        self._context = context
        self._alerts = context.bridge.price_alerts
        #: The dialog last opened from this panel (tests and the shortcut reach it here).
        self.dialog: AlertDialog | None = None

        self.model = AlertsModel(context.precision, self)
        self.table = ListTable(self)
        self.table.setAccessibleName("Price alerts")
        self.table.setModel(self.model)
        read_only_rows(self.table)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)

        self.new_action = self._action("&New…", "A new price alert on the traded pair")
        self.edit_action = self._action("&Edit…", "Change the highlighted alert (Enter)")
        self.rearm_action = self._action("&Re-arm", "Arm the highlighted alert again")
        self.delete_action = self._action("&Delete", "Delete the highlighted alert (Delete)")
        self.toolbar = QToolBar(self)
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for action in (self.new_action, self.edit_action, self.rearm_action, self.delete_action):
            self.toolbar.addAction(action)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.table)

        self.new_action.triggered.connect(self.new_alert)
        self.edit_action.triggered.connect(self.edit_selected)
        self.rearm_action.triggered.connect(self.rearm_selected)
        self.delete_action.triggered.connect(self.delete_selected)
        self.table.doubleClicked.connect(lambda _: self.edit_selected())
        self.table.enterRequested.connect(lambda _: self.edit_selected())
        self.table.removeRequested.connect(self.delete_selected)
        self.table.selectionModel().selectionChanged.connect(self._enable)
        topic = context.bridge.priceAlerts
        topic.connect(self._on_alerts)
        if topic.latest is None:  # the first panel of this session: the stored alerts
            self._load()
        else:
            self._show(topic.latest)
        self._enable()

    def _action(self, text: str, tip: str) -> QAction:
        action = QAction(text, self)
        action.setToolTip(tip)
        return action

    def _load(self) -> None:
        alerts, unreadable = read_alerts(self._context.settings)
        if unreadable:
            what = "an alert" if unreadable == 1 else f"{unreadable} alerts"
            self._context.notify(LogLevel.WARNING, f"Alerts: ignored {what} that cannot be read")
        self._alerts.load(alerts)

    def _on_alerts(self, alerts: tuple[PriceAlert, ...]) -> None:
        self._show(alerts)
        write_alerts(self._context.settings, alerts)

    def _show(self, alerts: Sequence[PriceAlert]) -> None:
        self.model.set_alerts(alerts)
        widen_to_fit(self.table)  # a time in "Last fired" was cut to "2026-11-24 0…"
        self._enable()

    # -- the highlighted alert ------------------------------------------------------------------

    def selected(self) -> PriceAlert | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.alert_at(rows[0].row()) if rows else None

    def select(self, alert_id: str) -> None:
        row = self.model.position(alert_id)
        if row is not None:
            self.table.selectRow(row)

    def _enable(self, *_: object) -> None:
        alert = self.selected()
        self.edit_action.setEnabled(alert is not None)
        self.delete_action.setEnabled(alert is not None)
        self.rearm_action.setEnabled(alert is not None and not alert.armed)

    def focus_entry(self) -> None:
        """The panel's shortcut: the cursor in the list (the first alert highlighted)."""
        self.table.setFocus(Qt.FocusReason.ShortcutFocusReason)
        if self.selected() is None and self.model.rowCount():
            self.table.selectRow(0)

    # -- intents --------------------------------------------------------------------------------

    def new_alert(self) -> AlertDialog:
        self.dialog = open_alert_dialog(self._context, self)
        return self.dialog

    def edit_selected(self) -> AlertDialog | None:
        alert = self.selected()
        if alert is None:
            return None
        self.dialog = open_alert_dialog(self._context, self, alert=alert)
        return self.dialog

    def rearm_selected(self) -> None:
        alert = self.selected()
        if alert is not None and not alert.armed:
            self._alerts.rearm(alert.id)

    def delete_selected(self) -> None:
        alert = self.selected()
        if alert is None:
            return
        row = self.model.position(alert.id) or 0
        self._alerts.remove(alert.id)
        if self.model.rowCount():
            self.table.selectRow(min(row, self.model.rowCount() - 1))
        self._context.notify(LogLevel.INFO, f"Alert deleted: {alert.pair} {alert.source}")
