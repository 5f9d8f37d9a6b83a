"""Edit > Settings: every preference on one page of groups. Apply (or OK) checks the values,
refuses a bad one with its reason beside the buttons (the field keeps what was typed and gets
the focus), stores them and emits ``applied`` so the window can put them to work at once.

Numbers are typed as text and read as Decimal (no float spin boxes for money). The reason is in
the theme's error colour; Apply may switch the theme with the dialog still open, so it follows.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import QSettings, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.domain.money import parse_decimal
from app.services.risk import LimitSpec
from app.ui.palette import TradePalette, follow_palette, level_css
from app.ui.preferences import (
    COST_METHODS,
    INTERVAL_RANGES,
    LOG_LEVELS,
    NOTIFY_EVENTS,
    RISK_FIELDS,
    THEMES,
    PreferenceError,
    Preferences,
    read_limit,
)

EVENT_TITLES = {
    "fill": "Fills",
    "refusal": "Refusals",
    "quote_expiring": "Quote about to expire",
    "offline": "Connection lost",
    "online": "Connection back",
}
INTERVAL_TITLES = {
    "top_of_book": "Top of book",
    "balances": "Balances",
    "order_book": "Depth",
    "orders": "Order list",
}


class SettingsDialog(QDialog):
    applied = Signal(object)  # Preferences

    def __init__(
        self,
        settings: QSettings,
        pairs: list[str],
        assets: list[str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        self._settings = settings
        self._pairs = pairs
        self._assets = assets
        prefs = Preferences.load(settings)

        self.intervals: dict[str, QLineEdit] = {}
        feeds = QFormLayout()
        for name, title in INTERVAL_TITLES.items():
            edit = QLineEdit(format(getattr(prefs, name), "f"), self)
            edit.setObjectName(f"interval_{name}")
            low, high = INTERVAL_RANGES[name]
            edit.setToolTip(f"Seconds between polls, {low} to {high}")
            feeds.addRow(f"{title} (s)", edit)
            self.intervals[name] = edit

        self.currency = QComboBox(self)
        self.currency.setObjectName("valuationCurrency")
        self.currency.addItems(sorted(set(assets) | {prefs.valuation_currency}))
        self.currency.setCurrentText(prefs.valuation_currency)
        self.watchlist = QLineEdit(", ".join(prefs.default_watchlist), self)
        self.watchlist.setObjectName("defaultWatchlist")
        self.watchlist.setPlaceholderText("e.g. BTC/USD, ETH/USD (empty: every pair)")
        self.confirm = QCheckBox("Confirm each order before it is sent", self)
        self.confirm.setObjectName("confirmOrders")
        self.confirm.setChecked(prefs.confirm_orders)
        self.max_notional = QLineEdit(format(prefs.max_notional, "f"), self)
        self.max_notional.setObjectName("maxNotional")
        self.max_distance = QLineEdit(format(prefs.max_distance_percent, "f"), self)
        self.max_distance.setObjectName("maxDistance")
        self.resting_hours = QLineEdit(format(prefs.resting_hours, "f"), self)
        self.resting_hours.setObjectName("restingHours")
        self.resting_hours.setToolTip(
            "A limit order that does not fill at once rests until this end time; the service "
            "cannot cancel it before"
        )
        self.slippage = QLineEdit(format(prefs.slippage_bps, "f"), self)
        self.slippage.setObjectName("slippageBps")
        self.slippage.setToolTip(
            "Hit bid / Lift offer send a limit this many basis points through the touch, "
            "ending within seconds: it fills now or expires, it never rests"
        )
        self.auto_requote = QCheckBox("Ask for a new quote when one expires", self)
        self.auto_requote.setObjectName("autoRequote")
        self.auto_requote.setChecked(prefs.auto_requote)
        self.size_presets = QLineEdit(prefs.size_presets, self)
        self.size_presets.setObjectName("sizePresets")
        self.size_presets.setPlaceholderText("e.g. BTC: 0.01 0.1 1; USD: 1,000 10,000")
        self.size_presets.setToolTip(
            "Amounts per asset, assets apart by ';'. They are quick buttons in the order "
            "ticket; the first of an asset is the default size of click-to-trade and of "
            "Hit bid / Lift offer (an order's amount is in the asset it sells)"
        )
        self.cost_method = QComboBox(self)
        self.cost_method.setObjectName("positionsMethod")
        for method, title in COST_METHODS.items():
            self.cost_method.addItem(title, method.value)
        self.cost_method.setCurrentIndex(self.cost_method.findData(prefs.positions_method))
        self.cost_method.setToolTip(
            "How a sale's cost is found: the average cost of what is held, or the oldest "
            "purchases first (Help > User guide: Positions and P&L)"
        )
        self.positions_since = QLineEdit(prefs.positions_since, self)
        self.positions_since.setObjectName("positionsSince")
        self.positions_since.setPlaceholderText("YYYY-MM-DD (empty: ever)")
        wide = self.positions_since.fontMetrics().horizontalAdvance("YYYY-MM-DD (empty: ever)")
        self.positions_since.setMinimumWidth(wide + 16)
        self.positions_since.setToolTip(
            'The positions\' "Realised since" column counts from the start of this day'
        )

        # Positions' choices on the valuation currency's row: the dialog grows no taller
        valuation = QHBoxLayout()
        valuation.addWidget(self.currency)
        for text, field in (("positions by", self.cost_method), ("since", self.positions_since)):
            label = QLabel(text, self)
            label.setBuddy(field)
            valuation.addWidget(label)
            valuation.addWidget(field)
        valuation.addStretch(1)
        trading = QFormLayout()
        trading.addRow("Valuation currency", valuation)
        trading.addRow("Default watchlist", self.watchlist)
        trading.addRow("", self.confirm)
        trading.addRow("Block orders worth more than", self.max_notional)
        trading.addRow("Warn when a limit is this far from the book (%)", self.max_distance)
        trading.addRow("Limit orders rest for (hours)", self.resting_hours)
        trading.addRow("Hit bid / lift offer slippage (bps)", self.slippage)
        trading.addRow("Size presets", self.size_presets)
        trading.addRow("RFQ", self.auto_requote)

        # Risk limits, two to a row (the dialog grows by three rows, not five)
        self.risk: dict[str, QLineEdit] = {}
        self._money_labels: list[tuple[QLabel, LimitSpec]] = []
        risk = QGridLayout()
        for index, (name, spec) in enumerate(RISK_FIELDS.items()):
            value = getattr(prefs, name)
            text = value if isinstance(value, str) else "" if value is None else format(value, "f")
            edit = QLineEdit(text, self)
            edit.setObjectName(name)
            edit.setPlaceholderText(
                "e.g. BTC: 20; ETH: 300" if spec.kind == "positions" else "none"
            )
            edit.setToolTip(f"{spec.help}. Empty: no limit")
            label = QLabel(spec.label.capitalize(), self)
            label.setBuddy(edit)
            if spec.kind == "money":  # in the valuation currency chosen above
                self._money_labels.append((label, spec))
            row, column = divmod(index, 2)
            risk.addWidget(label, row, column * 2)
            risk.addWidget(edit, row, column * 2 + 1)
            self.risk[name] = edit
        self._name_currency(self.currency.currentText())
        self.currency.currentTextChanged.connect(self._name_currency)

        self.theme = QComboBox(self)
        self.theme.setObjectName("theme")
        self.theme.addItems(list(THEMES))
        self.theme.setCurrentText(prefs.theme)
        self.events: dict[str, QCheckBox] = {}
        notify = QGridLayout()
        for index, event in enumerate(NOTIFY_EVENTS):
            box = QCheckBox(EVENT_TITLES[event], self)
            box.setObjectName(f"notify_{event}")
            box.setChecked(event in prefs.notify)
            notify.addWidget(box, index // 2, index % 2)
            self.events[event] = box
        self.tray = QCheckBox("System tray message when the window is not active", self)
        self.tray.setObjectName("notifyTray")
        self.tray.setChecked(prefs.notify_tray)
        self.sound = QCheckBox("Sound", self)
        self.sound.setObjectName("notifySound")
        self.sound.setChecked(prefs.notify_sound)
        notify.addWidget(self.tray, 3, 0, 1, 2)
        notify.addWidget(self.sound, 4, 0)

        self.remember = QCheckBox("Allow remembering the password in the OS keyring", self)
        self.remember.setObjectName("rememberAllowed")
        self.remember.setChecked(prefs.remember_password_allowed)
        self.log_level = QComboBox(self)
        self.log_level.setObjectName("logLevel")
        self.log_level.addItems(list(LOG_LEVELS))
        self.log_level.setCurrentText(prefs.log_level)
        other = QFormLayout()
        other.addRow("Theme", self.theme)
        other.addRow("", self.remember)
        other.addRow("Log level", self.log_level)

        self.error = QLabel(self)
        self.error.setObjectName("settingsError")
        self.error.setWordWrap(True)
        self.error.setProperty("level", "error")
        self.error.setStyleSheet(level_css("error"))
        follow_palette(self.set_palette)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Apply
            | QDialogButtonBox.StandardButton.Cancel,
            self,
        )
        self.buttons = buttons
        buttons.accepted.connect(self._ok)
        buttons.rejected.connect(self.reject)
        apply = buttons.button(QDialogButtonBox.StandardButton.Apply)
        apply.clicked.connect(self.apply)

        layout = QVBoxLayout(self)
        for title, inner in (
            ("Polling", feeds),
            ("Trading", trading),
            ("Risk limits: every order, RFQ accept and algo (empty: no limit)", risk),
            ("Notifications", notify),
            ("Appearance, security and logs", other),
        ):
            group = QGroupBox(title, self)
            group.setLayout(inner)
            layout.addWidget(group)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def _name_currency(self, currency: str) -> None:
        for label, spec in self._money_labels:
            label.setText(f"{spec.label.capitalize()} ({spec.unit_text(currency)})")

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch (Apply with another theme): the reason line in the new colour."""
        self.error.setStyleSheet(level_css("error", palette))

    def _fields(self) -> dict[str, QWidget]:
        return {
            **self.intervals,
            "valuation_currency": self.currency,
            "default_watchlist": self.watchlist,
            "max_notional": self.max_notional,
            "max_distance_percent": self.max_distance,
            "resting_hours": self.resting_hours,
            "slippage_bps": self.slippage,
            "size_presets": self.size_presets,
            "positions_method": self.cost_method,
            "positions_since": self.positions_since,
            **self.risk,
            "theme": self.theme,
            "log_level": self.log_level,
        }

    def preferences(self) -> Preferences:
        """The values on screen; PreferenceError names the first one that is not usable."""
        numbers: dict[str, Any] = {}
        texts = {name: edit.text() for name, edit in self.intervals.items()}
        texts["max_notional"] = self.max_notional.text()
        texts["max_distance_percent"] = self.max_distance.text()
        texts["resting_hours"] = self.resting_hours.text()
        texts["slippage_bps"] = self.slippage.text()
        for name, text in texts.items():
            try:
                numbers[name] = parse_decimal(text.replace(",", "").strip(), name)
            except ValueError:
                raise PreferenceError(name, f"{text.strip()!r} is not a number") from None
        for name, edit in self.risk.items():
            if RISK_FIELDS[name].kind == "positions":
                numbers[name] = edit.text().strip()
            else:
                numbers[name] = read_limit(edit.text(), name)
        watchlist = tuple(
            dict.fromkeys(p.strip().upper() for p in self.watchlist.text().split(",") if p.strip())
        )
        prefs = replace(
            Preferences(),
            **numbers,
            valuation_currency=self.currency.currentText(),
            default_watchlist=watchlist,
            confirm_orders=self.confirm.isChecked(),
            auto_requote=self.auto_requote.isChecked(),
            theme=self.theme.currentText(),
            notify=tuple(e for e, box in self.events.items() if box.isChecked()),
            notify_tray=self.tray.isChecked(),
            notify_sound=self.sound.isChecked(),
            remember_password_allowed=self.remember.isChecked(),
            log_level=self.log_level.currentText(),
            size_presets=self.size_presets.text().strip(),
            positions_method=str(self.cost_method.currentData()),
            positions_since=self.positions_since.text().strip(),
        )
        prefs.validated(self._pairs, self._assets)
        return prefs

    def apply(self) -> bool:
        """Check, store and announce; False (with the reason shown) when a value is refused."""
        try:
            prefs = self.preferences()
        except PreferenceError as exc:
            self.error.setText(exc.message)
            widget = self._fields().get(exc.field)
            if widget is not None:
                widget.setFocus()
            return False
        self.error.clear()
        prefs.save(self._settings)
        self.applied.emit(prefs)
        return True

    def _ok(self) -> None:
        if self.apply():
            self.accept()
