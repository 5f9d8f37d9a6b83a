"""The trading desks of one session, opened and closed together: the order journal, the order
desk, the RFQ desk, the list of outcomes not known and the risk gate (limits and kill switch)
that both desks' sends pass. The UI holds one ``TradingDesks`` and
hands it to the ticket panels and the blotter."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.services.journal import JournalEntry, OrderJournal
from app.services.order_desk import OrderDesk
from app.services.pretrade import CheckLimits
from app.services.rfq_desk import RfqDesk
from app.services.risk import RiskGate, RiskLimits
from app.services.session import TerminalSession
from app.services.settling import reconcile_on_start
from app.services.tasks import Tasks
from app.services.unknown_outcomes import UnknownOutcomes


@dataclass
class TradingDesks:
    journal: OrderJournal
    orders: OrderDesk
    rfq: RfqDesk
    outcomes: UnknownOutcomes
    risk: RiskGate
    _unsubscribe: list[Callable[[], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Every result of either desk may open or settle an unknown: the list is read again.
        self._unsubscribe = [
            self.orders.results.subscribe(self.outcomes.refresh),
            self.rfq.history.subscribe(self.outcomes.refresh),
        ]

    @classmethod
    def open(
        cls,
        session: TerminalSession,
        journal_path: Path | str | None = None,
        limits: CheckLimits | None = None,
        *,
        auto_requote: bool = False,
        tasks: Tasks | None = None,
        risk_limits: RiskLimits | None = None,
    ) -> TradingDesks:
        """The desks over ``session``; their background tasks (settlers, quote watchers,
        followers) belong to ``tasks``, the terminal's owner, when one is given. The risk gate
        reads the session's server clock (its day is the server's) and the journal (the day's
        usage survives a restart)."""
        journal = OrderJournal(journal_path)
        risk = RiskGate(
            risk_limits,
            clock=session.client.clock,
            journal=journal,
            account=session.environment.account,
        )
        return cls(
            journal,
            OrderDesk(session, journal, limits, tasks=tasks, risk=risk),
            RfqDesk(session, journal, auto_requote=auto_requote, tasks=tasks, risk=risk),
            UnknownOutcomes(session, journal, tasks=tasks),
            risk,
        )

    async def reconcile_on_start(self, session: TerminalSession) -> list[JournalEntry]:
        """Settle what the last run left open; what stays unknown is looked for all session
        and listed in the blotter. First the risk gate reads the day's usage from the journal,
        off the event loop (the first send then finds it ready)."""
        await self.risk.load_today()
        changed = await reconcile_on_start(
            session.client, session.environment.account, self.journal, session.log
        )
        self.outcomes.follow(changed)
        return changed

    async def close(self) -> None:
        """Stop the desks' tasks and close the journal (after the last write)."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self.outcomes.close()
        self.orders.close()
        await self.rfq.close()
        self.journal.close()
