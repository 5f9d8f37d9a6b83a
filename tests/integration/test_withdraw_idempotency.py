"""Withdrawals carry an idempotency key, and a lost answer is an unknown outcome.

The seed shows no payload for the withdraw operations, so the key travels as an
``Idempotency-Key`` header; the sandbox withdraws once per key, so a lost answer is settled by
sending the same withdrawal again with the same key."""

from __future__ import annotations

from decimal import Decimal

import pytest

from app.api import ClientSettings, OutcomeUnknown, RetryPolicy, ServiceClient
from app.api.client import IDEMPOTENCY_HEADER
from app.domain import Amount
from app.domain.records import BlockchainInstruction
from tests.harness import Faults, Recorder, SandboxProcess, Session

pytestmark = pytest.mark.anyio


async def test_each_withdrawal_sends_its_own_idempotency_key(
    sandbox: SandboxProcess, client: Session
) -> None:
    recorder = Recorder()
    async with ServiceClient(ClientSettings(sandbox.url), transport=recorder) as api:
        await api.login(client.user, client.password, client.account)
        whitelist = await api.withdraw_instructions()
        btc = next(
            i for i in whitelist if isinstance(i, BlockchainInstruction) and i.asset == "BTC"
        )
        await api.withdraw_blockchain(Amount(Decimal("0.01"), "BTC"), btc.network_type, btc.address)
        await api.withdraw_fiat(Amount(Decimal("10"), "USD"))
        await api.withdraw_fiat(Amount(Decimal("10"), "USD"), idempotency_key="tt-wd-chosen")
    sent = recorder.sent("POST", "/request/withdraw/")
    keys = [request.headers.get(IDEMPOTENCY_HEADER) for request in sent]
    assert len(keys) == 3 and all(keys) and len(set(keys)) == 3, keys
    assert keys[2] == "tt-wd-chosen"


async def test_a_withdrawals_lost_answer_is_an_unknown_outcome(
    sandbox: SandboxProcess, client: Session, faults: Faults
) -> None:
    """The server commits the withdrawal and the connection is cut: OutcomeUnknown with the
    key to settle or resend it by — never a plain network error that invites a retry — and
    the request was sent once."""
    recorder = Recorder()
    retry = RetryPolicy(attempts=3)
    async with ServiceClient(ClientSettings(sandbox.url), transport=recorder, retry=retry) as api:
        await api.login(client.user, client.password, client.account)
        faults({"kind": "drop_after_commit", "path": "/request/withdraw/fiat$", "count": 1})
        with pytest.raises(OutcomeUnknown) as lost:
            await api.withdraw_fiat(Amount(Decimal("25"), "USD"), idempotency_key="tt-wd-lost")
        assert lost.value.client_order_id == "tt-wd-lost"
        assert "unknown whether it was requested" in lost.value.message
        assert len(recorder.sent("POST", "/request/withdraw/fiat")) == 1
        faults.clear()
        listed = await api.withdrawals()
        assert [w.amount for w in listed] == [Decimal("25")]  # it was committed
        # Settled by sending it again with its key: the original record, withdrawn once.
        settled = await api.withdraw_fiat(
            Amount(Decimal("25"), "USD"), idempotency_key="tt-wd-lost"
        )
        assert settled == listed[0]
        assert [w.amount for w in await api.withdrawals()] == [Decimal("25")]
