"""Answers that cannot be read — JSON nested past the decoder's depth, NaN, an integer too long to
convert — are one typed error: an order whose answer was unreadable is unknown, looked up and
settled, never a traceback and never sent twice."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest

from app.api import ClientSettings, RetryPolicy, ServiceClient
from app.api.http import Reply
from app.services.journal import OrderJournal
from app.services.order_desk import OrderDesk
from app.services.session import Environment, TerminalSession
from app.services.ticket import TicketInput
from tests.harness import AppSandbox

pytestmark = pytest.mark.anyio

DEEP = "[" * 200_000 + "]" * 200_000
UNREADABLE = {
    "deep": DEEP,
    "nan": '{"order": {"size": NaN}}',
    "long integer": '{"order": {"ordering": ' + "9" * 5000 + "}}",
}


class Garbling(httpx.AsyncBaseTransport):
    """The sandbox's transport; the answer to an order, once it has executed there, is
    replaced by ``text``."""

    def __init__(self, inner: httpx.AsyncBaseTransport, text: str) -> None:
        self.inner = inner
        self.text = text

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.method == "POST" and request.url.path.endswith("/order/limit"):
            await response.aread()
            return httpx.Response(200, text=self.text, headers={"content-type": "application/json"})
        return response


@pytest.mark.parametrize("text", list(UNREADABLE.values()), ids=list(UNREADABLE))
def test_an_unreadable_body_is_not_json(text: str) -> None:
    with pytest.raises(ValueError, match="not JSON"):
        Reply(200, text, httpx.Headers(), 0.0).json()


@pytest.mark.parametrize("text", list(UNREADABLE.values()), ids=list(UNREADABLE))
async def test_an_order_whose_answer_cannot_be_read_is_settled_by_looking_it_up(
    text: str,
) -> None:
    async with AppSandbox() as sandbox:
        user = await sandbox.new_client()
        client = ServiceClient(
            ClientSettings(sandbox.url),
            retry=RetryPolicy(attempts=1),
            transport=Garbling(sandbox.transport(), text),
        )
        await client.login(user.user, user.password, user.account)
        session = TerminalSession(
            client, Environment(sandbox.url, user.user, user.account, sandbox=True)
        )
        journal = OrderJournal(":memory:")
        desk = OrderDesk(session, journal)
        try:
            await session.top_of_book.poll_once()
            await session.balances.poll_once()
            result = await desk.submit(TicketInput("USD", "BTC", Decimal(100), "market"))
            assert result.status == "filled"  # found by its clientOrderId at once
            assert (
                result.order is not None and result.order.client_order_id == result.client_order_id
            )
            orders = await client.orders(max_orders=10)
            assert [o.client_order_id for o in orders] == [result.client_order_id]
        finally:
            desk.close()
            journal.close()
            await client.aclose()
