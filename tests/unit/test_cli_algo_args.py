"""``tradeterm algo``'s argument table: each option reaches the engine's spec under its own
name and unit, and a value no algo could work is a usage error before anything connects."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from app.cli import algo_args
from app.cli.errors import UsageError
from app.services.algos.specs import AlgoSpec

BASE = ("--pair", "btc/usd", "--side", "buy", "--amount", "1000")


def spec(*argv: str) -> AlgoSpec:
    return algo_args.spec_of(algo_args.build().parse_args(argv))


def test_a_twap_reads_its_duration_and_percentages_in_the_traders_units() -> None:
    made = spec(
        "twap", *BASE, *("--slices", "5", "--duration", "15m", "--randomise", "20%"),
        *("--participation", "50", "--collar-bps", "0", "--price-limit", "95000"),
    )  # fmt: skip
    assert (made.kind, made.pair, made.side) == ("twap", "BTC/USD", "buy")
    assert made.amount == Decimal(1000)
    assert made.duration_seconds == Decimal(900) and made.slices == 5
    assert (made.randomise, made.participation) == (Decimal("0.2"), Decimal("0.5"))
    assert (made.collar_bps, made.price_limit) == (Decimal(0), Decimal(95000))


def test_each_kind_maps_to_the_engines_kind_with_its_own_options() -> None:
    assert spec("take-profit", *BASE, "--trigger", "80000").kind == "take_profit"
    trailing = spec("trailing-stop", *BASE, "--trail-bps", "25", "--trigger-ref", "mid")
    assert (trailing.kind, trailing.trail_bps, trailing.trigger_ref) == (
        "trailing_stop",
        Decimal(25),
        "mid",
    )
    stop_limit = spec("stop-limit", *BASE, "--trigger", "99000", "--limit", "99500")
    assert (stop_limit.trigger, stop_limit.limit_price) == (Decimal(99000), Decimal(99500))
    timed = spec("timed", *BASE, "--start-at", "2030-01-02T03:04:05Z")
    assert timed.start_at == datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert spec("clip", *BASE, "--display", "100").display == Decimal(100)


def test_a_value_no_algo_could_work_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="randomisation is between 0 and 50 %"):
        spec("twap", *BASE, "--slices", "5", "--duration", "60", "--randomise", "80")


def test_an_option_of_another_kind_is_refused_by_the_parser(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        algo_args.build().parse_args(["clip", *BASE, "--display", "1", "--slices", "3"])
    assert exited.value.code == 2
    assert "unrecognized arguments: --slices 3" in capsys.readouterr().err
