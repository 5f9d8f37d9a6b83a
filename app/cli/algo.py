"""``tradeterm algo``: one parent order worked by the execution engine in the foreground, and
the stored parents listed or resumed — the terminal's own engine, journal and algo store, with
no window.

The connection is made as ``tradeterm api`` makes it (app.cli.credentials: the URL and the
login from options or the environment, the password hashed by the client and never kept or
printed). The journal is the terminal's unless ``--journal`` says otherwise, and the algo store
lies beside it, so a parent started here is listed and resumed by the terminal too, and the
other way round. Exit codes: ``algo_foreground.Exit``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Callable
from typing import Any

from app.api import ClientSettings, NetworkError, ServiceClient, ServiceError
from app.cli import algo_args, credentials, runner
from app.cli.algo_foreground import Ending, Exit, Foreground, ending_of
from app.cli.algo_progress import Progress, children_data, listing_data, listing_text
from app.cli.errors import UsageError
from app.cli.output import to_json
from app.domain.display import Precision
from app.services.algos.engine import AlgoRefused, ExecutionEngine
from app.services.algos.parents import Parent
from app.services.algos.specs import AlgoSpec
from app.services.market import MarketSnapshot
from app.services.session import Environment
from app.services.terminal import Terminal
from app.services.ticket import TicketError

#: Seconds to wait for the pair's first price before the parent starts anyway.
PRICE_WAIT = 10.0


def run(args: argparse.Namespace, source: credentials.Source | None = None) -> int:
    """Parsed arguments to an exit code; every failure as one ``error:`` line, no traceback."""
    runner.quiet_logging(args.verbose)
    try:
        spec = algo_args.spec_of(args) if args.algo_command in algo_args.KINDS else None
        source = source or credentials.Source()
        url = credentials.base_url(args.base_url, source)
        login = credentials.login(source)
        return int(asyncio.run(_session(args, url, login, spec)))
    except UsageError as exc:
        return runner.fail(Exit.USAGE, str(exc))
    except (AlgoRefused, TicketError) as exc:
        return runner.fail(Exit.FAILED, f"refused: {exc}")
    except NetworkError as exc:
        return runner.fail(Exit.NETWORK, str(exc))
    except ServiceError as exc:
        return runner.fail(Exit.FAILED, str(exc))
    except KeyboardInterrupt:
        return runner.fail(Exit.INTERRUPTED, "interrupted")
    except BrokenPipeError:
        runner.silence_stdout()
        return Exit.FILLED
    except Exception as exc:  # the promise: no traceback ever reaches the user
        return runner.fail(Exit.FAILED, f"internal error: {type(exc).__name__}: {exc}")


async def _session(
    args: argparse.Namespace,
    url: str,
    login: credentials.Login,
    spec: AlgoSpec | None,
) -> Exit:
    settings = ClientSettings(
        url, connect_timeout=min(runner.CONNECT_TIMEOUT, args.timeout), read_timeout=args.timeout
    )
    client = ServiceClient(settings)
    try:
        await client.login(login.user, login.password, login.account)
    except BaseException:
        await client.aclose()
        raise
    environment = Environment(url, login.user, login.account)
    terminal = Terminal.build(client, environment, watchlist=[spec.pair] if spec else None)
    try:
        terminal.open_desks(args.journal)
        assert terminal.algos is not None  # open_desks builds it
        printer = Printer(args.json, Precision())
        if args.algo_command == "list":
            return await _list(terminal, printer)
        if spec is not None:
            await _started(terminal, spec.pair, printer)
            return await _foreground(terminal.algos, printer, lambda: _submit(terminal, spec))
        return await _resume(terminal, printer, args.parent_id)
    finally:
        await terminal.aclose()


async def _started(terminal: Terminal, pair: str, printer: Printer) -> None:
    """The feeds started and the pair's first price seen (for at most ``PRICE_WAIT``
    seconds): a parent started before it would find no price and skip its first slice."""
    session = terminal.session
    await session.start()
    printer.precision.learn(session.pair_info)
    unlisted = bool(session.pair_info) and pair not in session.pair_info
    if unlisted or session.market.snapshot.top(pair) is not None:
        return  # an unlisted pair is the engine's to refuse, at once
    priced = asyncio.Event()

    def look(snapshot: MarketSnapshot) -> None:
        if snapshot.top(pair) is not None:
            priced.set()

    unsubscribe = session.market.changed.subscribe(look)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(priced.wait(), PRICE_WAIT)
    finally:
        unsubscribe()


def _submit(terminal: Terminal, spec: AlgoSpec) -> Parent:
    """A new parent: the other stored parents are not restored (a restore pauses them, and
    one may be worked by another terminal right now)."""
    assert terminal.algos is not None
    return terminal.algos.submit(spec)


async def _list(terminal: Terminal, printer: Printer) -> Exit:
    """The stored parents as a restart finds them: each child's fate read from the journal
    and the server, the unfinished ones paused."""
    await terminal.reconcile_on_start()
    assert terminal.algos is not None
    printer.precision.learn(terminal.session.pair_info)
    parents = list(terminal.algos.parents.values())
    printer.listing(parents)
    return Exit.FILLED


async def _resume(terminal: Terminal, printer: Printer, parent_id: str) -> Exit:
    await terminal.reconcile_on_start()  # restores every stored parent, paused
    engine = terminal.algos
    assert engine is not None
    parent = engine.parents.get(parent_id)
    if parent is None:
        raise UsageError(
            f"no stored parent {parent_id} for account {terminal.account} "
            "(`tradeterm algo list` shows them)"
        )
    terminal.session.set_watchlist([parent.spec.pair])
    await _started(terminal, parent.spec.pair, printer)
    if parent.ended:
        printer.progress(Progress.of(parent, printer.precision))
        ending = ending_of(parent, interrupted=False)
        printer.summary(parent, ending)
        return ending.code

    def resumed() -> Parent:
        engine.resume(parent_id)
        return parent

    return await _foreground(engine, printer, resumed)


async def _foreground(
    engine: ExecutionEngine, printer: Printer, start: Callable[[], Parent]
) -> Exit:
    """Ctrl-C becomes a pause from the moment the parent exists: nothing awaits between its
    start and the handler, and the loop runs a signal's handler only at its next await."""
    loop = asyncio.get_running_loop()
    parent = start()
    watch = Foreground(engine, parent, printer.precision, printer.progress, printer.notice)
    signals = _catch(loop, watch.interrupt)
    try:
        ending = await watch.run()
    finally:
        for number in signals:
            loop.remove_signal_handler(number)
    printer.summary(parent, ending)
    return ending.code


def _catch(loop: asyncio.AbstractEventLoop, handler: Callable[[], None]) -> list[int]:
    """SIGINT (and SIGTERM: a service manager's stop) as a pause; where the loop cannot take
    signals (Windows), Ctrl-C stays Python's KeyboardInterrupt."""
    caught: list[int] = []
    for number in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(number, handler)
        except (NotImplementedError, RuntimeError):
            continue
        caught.append(number)
    return caught


class Printer:
    """Text lines for people, or JSON lines (``--json``) for scripts, on stdout; notices on
    stderr either way."""

    def __init__(self, as_json: bool, precision: Precision) -> None:
        self.as_json = as_json
        self.precision = precision

    def _line(self, text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def progress(self, progress: Progress) -> None:
        if self.as_json:
            self._line(json.dumps({"event": "progress", **progress.data()}, ensure_ascii=False))
        else:
            self._line(progress.text(self.precision))

    def notice(self, text: str) -> None:
        sys.stderr.write(f"note: {text}\n")
        sys.stderr.flush()

    def summary(self, parent: Parent, ending: Ending) -> None:
        progress = Progress.of(parent, self.precision)
        out = parent.in_flight_words()
        if self.as_json:
            data: dict[str, Any] = {
                "event": "summary",
                **progress.data(),
                "outcome": ending.outcome,
                "exitCode": int(ending.code),
                "inFlight": out,
                "childOrders": children_data(parent),
            }
            self._line(json.dumps(data, ensure_ascii=False))
            return
        asset = parent.spec.source
        filled = self.precision.exact(parent.filled, asset)
        target = self.precision.exact(parent.target, asset)
        self._line(f"{ending.outcome} — {filled} of {target} {asset} filled; {out}")
        if not parent.ended:
            self._line(f"resume with: tradeterm algo resume {parent.id}")

    def listing(self, parents: list[Parent]) -> None:
        if self.as_json:
            self._line(to_json(listing_data(parents, self.precision)))
        else:
            self._line(listing_text(parents, self.precision))
