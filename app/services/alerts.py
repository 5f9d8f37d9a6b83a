"""The trader's price alerts, evaluated on the prices the terminal already polls.

``PriceAlerts`` holds the alerts (``app.domain.alerts``: the rule of when one fires) and looks
at every top-of-book poll the session publishes — no request of its own. The pairs of the armed
alerts that are not watched are handed to the session (``poll_also``), which adds them to the
one top-of-book request it makes; with no armed alert on an unwatched pair nothing is added.

A firing is told as a session log event of kind ``price_alert`` (level warning), so it reaches
the trader the way fills do: the log panel, an in-window notice, and the notifier's tray message
and sound when the window is inactive (``app/ui/notifier.py``).

Every change of the alerts (added, edited, removed, re-armed, fired, the price seen on the other
side of a level) is published on ``changed`` with the whole list, for the alerts panel and for
the settings file the UI keeps them in; a poll that changes nothing publishes nothing.
No Qt here: the widgets reach it through ``app/ui/bridge.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime

from app.domain import utc_now
from app.domain.alerts import PriceAlert
from app.domain.display import Precision
from app.domain.records import PairInfo, TopOfBook
from app.services.events import Topic
from app.services.log_events import EventKind, LogLevel

Log = Callable[[LogLevel, str, EventKind], None]


class PriceAlerts:
    """The alerts of one session; see the module docstring."""

    def __init__(
        self,
        books: Topic[dict[str, TopOfBook]],
        poll_also: Callable[[Sequence[str]], None],
        log: Log,
        pair_info: Callable[[], Mapping[str, PairInfo]] = dict,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._alerts: dict[str, PriceAlert] = {}
        self._poll_also = poll_also
        self._log = log
        self._pair_info = pair_info
        self._clock = clock
        self._needed: tuple[str, ...] = ()
        self.changed: Topic[tuple[PriceAlert, ...]] = Topic("price alerts")
        books.subscribe(self.on_books)

    @property
    def alerts(self) -> tuple[PriceAlert, ...]:
        return tuple(self._alerts.values())

    def get(self, alert_id: str) -> PriceAlert | None:
        return self._alerts.get(alert_id)

    # -- the trader's intents -------------------------------------------------------------------

    def load(self, alerts: Iterable[PriceAlert]) -> None:
        """Replace every alert (the stored ones, at start)."""
        self._alerts = {alert.id: alert for alert in alerts}
        self._changed()

    def put(self, alert: PriceAlert) -> None:
        """Add ``alert``, or replace the one with its id (an edit)."""
        self._alerts[alert.id] = alert
        self._changed()

    def remove(self, alert_id: str) -> None:
        if self._alerts.pop(alert_id, None) is not None:
            self._changed()

    def rearm(self, alert_id: str) -> None:
        alert = self._alerts.get(alert_id)
        if alert is not None:
            self._alerts[alert_id] = alert.rearmed()
            self._changed()

    # -- evaluation -----------------------------------------------------------------------------

    def needed_pairs(self) -> tuple[str, ...]:
        """The pairs the armed alerts watch (sorted, each once)."""
        return tuple(sorted({alert.pair for alert in self._alerts.values() if alert.armed}))

    def on_books(self, books: Mapping[str, TopOfBook]) -> None:
        """One poll's prices: every armed alert on a pair of the poll looks at its price."""
        if not self._alerts:
            return
        now = self._clock()
        changed = False
        fired: list[PriceAlert] = []
        for alert_id, alert in list(self._alerts.items()):
            book = books.get(alert.pair)
            if book is None or not alert.armed:
                continue
            seen, fires = alert.observe(alert.price_of(book), now)
            if seen != alert:
                self._alerts[alert_id] = seen
                changed = True
            if fires:
                fired.append(seen)
        if changed:
            self._changed()
        for alert in fired:
            self._tell(alert)

    def _tell(self, alert: PriceAlert) -> None:
        precision = Precision()
        precision.learn(dict(self._pair_info()))
        level = precision.price_text(alert.level, alert.pair)
        price = precision.price_text(alert.last_fired_price, alert.pair)
        self._log(LogLevel.WARNING, alert.fired_message(level, price), EventKind.PRICE_ALERT)

    def _changed(self) -> None:
        needed = self.needed_pairs()
        if needed != self._needed:
            self._needed = needed
            self._poll_also(needed)
        self.changed.publish(self.alerts)
