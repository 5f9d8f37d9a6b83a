"""Everything one running sandbox holds, built from its configuration."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import app
from app.domain import format_timestamp, utc_now
from app.sandbox.auth import Authenticator
from app.sandbox.config import SandboxConfig
from app.sandbox.demo_data import seed_demo
from app.sandbox.faults import Faults
from app.sandbox.keyfile import private_database
from app.sandbox.market import Market
from app.sandbox.orders import OrderEngine
from app.sandbox.rfq import QuoteDesk
from app.sandbox.store import Store
from app.sandbox.top_bodies import TopOfBookBodies
from app.sandbox.transfers import Transfers


@dataclass
class Sandbox:
    config: SandboxConfig
    store: Store
    market: Market
    auth: Authenticator
    orders: OrderEngine
    quotes: QuoteDesk
    transfers: Transfers
    launched_at: datetime
    build: dict[str, Any]
    instance: str
    faults: Faults = field(default_factory=Faults)
    top_bodies: TopOfBookBodies = field(default_factory=TopOfBookBodies)
    now: Callable[[], datetime] = field(default=utc_now)

    @classmethod
    def create(cls, config: SandboxConfig) -> Sandbox:
        private_database(config.db_path)
        store = Store(config.db_path)
        launched = utc_now()
        seed_demo(store, launched)
        market = Market(config.seed, config.tick_seconds)
        return cls(
            config=config,
            store=store,
            market=market,
            auth=Authenticator(
                store,
                config.token_ttl,
                config.login_failures_allowed,
                config.login_window,
                db_path=config.db_path,
                address_failures_allowed=config.login_address_failures_allowed,
            ),
            orders=OrderEngine(store, market, config.credit_hours),
            quotes=QuoteDesk(store, market, config.credit_hours, config.quote_ttl),
            transfers=Transfers(store),
            launched_at=launched,
            build=build_info(launched),
            # A random name per launch: tells restarts apart without naming the host or pid.
            instance=uuid.uuid4().hex[:16],
        )

    def background_step(self) -> None:
        """One tick of the simulation: prices, resting orders, pending deposits."""
        now = self.now()
        self.market.advance()
        self.orders.match_resting()
        self.transfers.complete_due(now)


def build_info(launched: datetime) -> dict[str, Any]:
    """Version from the package metadata; commit and branch from git when run from a checkout."""
    commit = _git("rev-parse", "HEAD") or "unknown"
    branch = _git("rev-parse", "--abbrev-ref", "HEAD") or "unknown"
    stamp = launched
    if commit != "unknown":
        seconds = _git("show", "-s", "--format=%ct", "HEAD")
        if seconds and seconds.isdigit():
            stamp = datetime.fromtimestamp(int(seconds), launched.tzinfo)
    return {
        "version": app.version(),
        "commit": commit,
        "branch": branch,
        "iso8601": format_timestamp(stamp),
        "unixSeconds": int(stamp.timestamp()),
    }


def _git(*args: str) -> str | None:
    root = Path(__file__).resolve().parents[2]
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            [git, *args], cwd=root, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
