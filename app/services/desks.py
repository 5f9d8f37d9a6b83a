"""The trading desks of one session, opened and closed together: the order journal, the order
desk and the RFQ desk. The UI holds one ``TradingDesks`` and hands it to the ticket panels."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.services.journal import OrderJournal
from app.services.order_desk import OrderDesk
from app.services.pretrade import CheckLimits
from app.services.rfq_desk import RfqDesk
from app.services.session import TerminalSession


@dataclass
class TradingDesks:
    journal: OrderJournal
    orders: OrderDesk
    rfq: RfqDesk

    @classmethod
    def open(
        cls,
        session: TerminalSession,
        journal_path: Path | str | None = None,
        limits: CheckLimits | None = None,
        *,
        auto_requote: bool = False,
    ) -> TradingDesks:
        journal = OrderJournal(journal_path)
        return cls(
            journal,
            OrderDesk(session, journal, limits),
            RfqDesk(session, journal, auto_requote=auto_requote),
        )

    async def close(self) -> None:
        """Stop the desks' tasks and close the journal (after the last write)."""
        self.orders.close()
        await self.rfq.close()
        self.journal.close()
