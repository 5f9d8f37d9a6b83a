"""Per-trade economics: basis points against the mid, signed so that + is a cost for a Buy and a
Sell alike, computed exactly; the nearest stored sample within a tolerance; stored floats read
back as the Decimal prices they were made from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain.fill_economics import FillEconomics, MidSample, bps_against_mid
from app.domain.money import MONEY_CONTEXT
from app.services.mid_history import nearest, stored_price

D = Decimal
T0 = datetime(2026, 11, 24, 6, 0, tzinfo=UTC)


def test_a_cost_is_positive_for_a_buy_and_a_sell() -> None:
    mid = D("100.00")
    assert bps_against_mid("buy", D("100.05"), mid) == D(5)  # paid above the mid
    assert bps_against_mid("sell", D("99.95"), mid) == D(5)  # received below it
    assert bps_against_mid("buy", D("99.99"), mid) == D(-1)  # better than the mid
    assert bps_against_mid("sell", D("100.02"), mid) == D(-2)
    assert bps_against_mid("buy", mid, mid) == 0


def test_the_figure_is_exact_not_rounded_before_display() -> None:
    # ETH/USD in the sandbox at rest: bid 3,099.76, ask 3,100.24; a Buy lifts the ask.
    sample = MidSample(T0, D("3099.76"), D("3100.24"))
    assert sample.mid == D("3100.00")
    bps = bps_against_mid("buy", D("3100.24"), sample.mid)
    with localcontext(MONEY_CONTEXT):
        assert bps == D("0.24") * 10_000 / D("3100")  # 24/31, to 50 digits
    assert str(bps).startswith("0.774193548387096774193548387096774193548387096774")
    with pytest.raises(ValueError, match="positive"):
        bps_against_mid("buy", D(1), D(0))


def test_a_half_increment_mid_is_kept_exactly() -> None:
    assert MidSample(T0, D("90893.91"), D("90893.92")).mid == D("90893.915")


def test_a_fill_without_a_mid_has_no_figure() -> None:
    none = FillEconomics("buy", False, D(100), T0, None, "never watched")
    assert (none.mid, none.bps, none.sample_offset, none.kind) == (None, None, None, "slippage")
    later = MidSample(T0 + timedelta(seconds=1.5), D("99"), D("101"))
    rfq = FillEconomics("sell", True, D("99.9"), T0, later)
    assert (rfq.mid, rfq.bps, rfq.sample_offset, rfq.kind) == (D(100), D(10), 1.5, "markup")
    no_price = FillEconomics("sell", False, None, T0, later)
    assert no_price.bps is None


def samples(*times: float) -> np.ndarray:
    return np.array([times, [1.0] * len(times), [2.0] * len(times)], dtype=np.float64)


def test_the_nearest_sample_within_the_tolerance() -> None:
    data = samples(10.0, 11.0, 12.5, 20.0)
    assert nearest(data, [11.2, 11.9, 12.0, 11.75, 9.0, 21.0], 5.0) == [1, 2, 2, 1, 0, 3]
    # Beyond the tolerance on both sides: none.
    assert nearest(data, [4.9, 16.25, 25.5], 5.0) == [None, 2, None]
    assert nearest(data, [16.26], 3.7) == [None]
    assert nearest(samples(), [10.0], 5.0) == [None]


@given(st.decimals(min_value=D("0.0000001"), max_value=D("99999999"), places=7))
def test_a_stored_price_reads_back_as_the_price_it_was(price: Decimal) -> None:
    assert stored_price(float(price)) == price
