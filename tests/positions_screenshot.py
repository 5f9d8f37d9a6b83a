"""The README's positions screenshot, made by the app's own panels against a fresh sandbox.

``QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.positions_screenshot resources/screenshots``
writes positions.png: the positions dock at the compact layout's width after a few buys and
sells spread over half a minute, with the chart panel running beside it (hidden) so the P&L
chart has stored mids to value the portfolio with. Not a test: it asserts only that each
state it photographs was reached.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

from PySide6.QtWidgets import QApplication

from app.api import ClientSettings, ServiceClient
from app.domain.display import Precision
from app.services.session import Environment, FeedIntervals, TerminalSession
from app.ui.bridge import SessionBridge
from app.ui.panels.base import PanelContext
from app.ui.panels.chart import ChartPanel
from app.ui.panels.positions import PositionsPanel
from app.ui.qt import QEventLoop
from app.ui.settings import open_settings
from app.ui.theme import apply_theme
from tests.harness import SandboxProcess, new_client, until
from tests.screenshots import _save

SIZE = (1366, 250)
#: (source, destination, size): the trades, a few seconds apart.
TRADES = [
    ("USD", "BTC", "30000"),
    ("USD", "ETH", "8000"),
    ("BTC", "USD", "0.1"),
    ("USD", "BTC", "10000"),
    ("ETH", "USD", "1"),
    ("BTC", "USD", "0.15"),
]


async def _shoot(sandbox: SandboxProcess, folder: Path, out: Path) -> None:
    account = new_client(sandbox, balances={"USD": "100000", "BTC": "1", "ETH": "5"}, credit={})
    client = ServiceClient(ClientSettings(sandbox.url))
    await client.login(account.user, account.password, account.account)
    session = TerminalSession(
        client,
        Environment(sandbox.url, account.user, account.account, sandbox=True),
        FeedIntervals(top_of_book=0.5, balances=1.0, order_book=5.0),
    )
    bridge = SessionBridge(session)
    precision = Precision()
    context = PanelContext(bridge, precision, open_settings(folder), lambda *_: None)
    await session.start()
    precision.learn(session.pair_info)
    bridge.select_pair("BTC/USD")
    chart = ChartPanel(context)  # records the mids the P&L chart values BTC with
    positions = PositionsPanel(context)
    positions.resize(*SIZE)
    positions.show()
    await until(lambda: positions.refreshes >= 1)
    for source, destination, size in TRADES:
        await client.market_order(source, destination, Decimal(size))
        await asyncio.sleep(4)
    chart.history.flush(everything=True)
    done = positions.refreshes
    positions.refresh()
    await until(lambda: positions.refreshes > done and positions.revaluations > 0, timeout=30)
    _save(positions, out / "positions.png")
    await positions.stop_feed()
    positions.deleteLater()
    chart.deleteLater()
    await session.stop()
    await client.aclose()
    account.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where the PNG goes")
    parser.add_argument("--theme", default="dark", choices=("dark", "light"))
    args = parser.parse_args(argv)
    args.folder.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    apply_theme(app, args.theme)
    sandbox = SandboxProcess().start()
    try:
        with (
            tempfile.TemporaryDirectory() as scratch,
            asyncio.Runner(loop_factory=lambda: QEventLoop(app)) as runner,
        ):
            runner.run(_shoot(sandbox, Path(scratch), args.folder))
    finally:
        sandbox.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
