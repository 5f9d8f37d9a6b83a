"""Parts of the service client that need no server: error mapping, retry delays, token
lifetime and the server clock."""

from __future__ import annotations

import base64
import json
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.api import (
    ClientSettings,
    CreditNotAvailable,
    Forbidden,
    InsufficientFunds,
    InvalidRequest,
    NotFound,
    RateLimited,
    Refused,
    RetryPolicy,
    ServerClock,
    ServerError,
    ServiceClient,
    ServiceError,
    Unauthorized,
)
from app.api.auth import DEFAULT_LIFETIME, PAST_EXPIRY_RETRY, Token, jwt_lifetime, token_lifetime
from app.api.backoff import parse_retry_after
from app.api.errors import describe_unexpected, error_messages, from_response
from app.domain import format_timestamp

GATEWAY_PAGE = (
    "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
    "</h1></center><hr><center>nginx</center></body></html>"
)


def errors_body(status: int, *messages: str) -> dict[str, Any]:
    return {"errors": list(messages), "status": "failedDependency", "httpStatusCode": status}


# -- errors.from_response ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, InvalidRequest),
        (401, Unauthorized),
        (403, Forbidden),
        (404, NotFound),
        (409, Refused),
        (410, Refused),
        (424, Refused),
        (429, RateLimited),
        (500, ServerError),
        (502, ServerError),
        (503, ServerError),
        (504, ServerError),
    ],
)
def test_each_status_maps_to_its_class(status: int, kind: type[ServiceError]) -> None:
    error = from_response(status, errors_body(status, "It went wrong"), "", None)
    assert type(error) is kind
    assert error.status == status
    assert error.message == "It went wrong" and error.messages == ["It went wrong"]
    assert str(error) == f"HTTP {status}: It went wrong"


def test_not_found_is_not_forbidden_but_forbidden_is_a_not_found() -> None:
    missing = from_response(404, errors_body(404, "Order x not found"), "", None)
    forbidden = from_response(403, errors_body(403, "Forbidden: no access"), "", None)
    assert isinstance(forbidden, NotFound) and not isinstance(missing, Forbidden)


def test_424_is_told_apart_by_the_message_prefix_and_kept_verbatim() -> None:
    short = "Insufficient Funds: Requested 10 BTC but only 2 BTC is available"
    credit = "Credit Not Available: please contact your account executive"
    funds = from_response(424, errors_body(424, short), "", None)
    assert isinstance(funds, InsufficientFunds) and not isinstance(funds, CreditNotAvailable)
    assert funds.message == short
    closed = from_response(424, {"orderId": "o-1", **errors_body(424, credit)}, "", None)
    assert isinstance(closed, CreditNotAvailable) and not isinstance(closed, InsufficientFunds)
    assert closed.message == credit and closed.body["orderId"] == "o-1"
    other = from_response(424, errors_body(424, "Venue closed"), "", None)
    assert type(other) is Refused
    # Only the beginning counts.
    inside = from_response(424, errors_body(424, "Note: Insufficient Funds"), "", None)
    assert type(inside) is Refused


def test_several_messages_are_joined_and_kept() -> None:
    error = from_response(400, errors_body(400, "size must be positive", "unknown asset"), "", None)
    assert error.messages == ["size must be positive", "unknown asset"]
    assert error.message == "size must be positive; unknown asset"


def test_both_documented_500_shapes() -> None:
    internal = from_response(500, {"status": 500, "error": "Internal Server Error"}, "", None)
    assert type(internal) is ServerError and internal.message == "Internal Server Error"
    listed = from_response(503, errors_body(503, "Service temporarily unavailable"), "", None)
    assert type(listed) is ServerError and listed.message == "Service temporarily unavailable"
    assert error_messages({"status": 500, "error": ""}) == []


def test_rate_limit_keeps_retry_after() -> None:
    error = from_response(429, errors_body(429, "slow down"), "", 3.0)
    assert isinstance(error, RateLimited) and error.retry_after == 3.0
    assert isinstance(from_response(429, None, "", None), RateLimited)


def test_html_page_is_described_in_words() -> None:
    error = from_response(502, None, GATEWAY_PAGE, None)
    assert type(error) is ServerError and error.status == 502
    assert "HTML page" in error.message and "502 Bad Gateway" in error.message
    assert "<" not in error.message and "nginx" not in error.message
    untitled = describe_unexpected("<html><body>oops</body></html>")
    assert "HTML page" in untitled and "<" not in untitled


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", "no details given"), ("   \n ", "no details given"), ("Bad gateway", "Bad gateway")],
)
def test_other_bodies_are_described(text: str, expected: str) -> None:
    error = from_response(503, None, text, None)
    assert type(error) is ServerError and expected in error.message


def test_long_text_bodies_are_cut_to_one_line() -> None:
    message = describe_unexpected("x\n" * 500)
    assert "\n" not in message and len(message) < 200


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    status=st.integers(400, 599),
    body=st.one_of(
        st.none(),
        st.dictionaries(
            st.sampled_from(["errors", "error", "message", "status", "x"]),
            st.one_of(st.none(), st.integers(), st.text(), st.lists(st.text() | st.integers())),
        ),
        st.lists(st.integers()),
        st.text(),
    ),
    text=st.text(),
)
def test_any_failure_maps_to_a_service_error(status: int, body: Any, text: str) -> None:
    error = from_response(status, body, text, None)
    assert isinstance(error, ServiceError) and error.status == status
    assert error.messages and all(isinstance(m, str) for m in error.messages)
    assert isinstance(str(error), str)


# -- RetryPolicy.delay ------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), attempt=st.integers(1, 3))
def test_delays_are_jittered_within_bounds(seed: int, attempt: int) -> None:
    policy = RetryPolicy(attempts=4, base=0.2, cap=5.0)
    delay = policy.delay(attempt, None, random.Random(seed))
    assert delay is not None
    assert 0 <= delay <= min(policy.cap, policy.base * 2 ** (attempt - 1))


def test_delays_grow_and_are_capped() -> None:
    policy = RetryPolicy(attempts=20, base=0.5, cap=2.0)
    rng = random.Random(7)
    highs = [max(policy.delay(a, None, rng) or 0 for _ in range(200)) for a in range(1, 8)]
    assert highs[0] <= 0.5 and highs[1] <= 1.0 and highs[1] > 0.5
    assert all(high <= 2.0 for high in highs) and highs[-1] > 1.5


def test_retry_after_is_honoured_even_beyond_the_cap() -> None:
    policy = RetryPolicy(attempts=4, cap=1.0, max_retry_after=30.0)
    rng = random.Random(1)
    assert policy.delay(1, 1.0, rng) == 1.0
    assert policy.delay(2, 12.0, rng) == 12.0
    assert policy.delay(1, 30.0, rng) == 30.0
    assert policy.delay(1, 0.0, rng) == 0.0


def test_gives_up() -> None:
    policy = RetryPolicy(attempts=3)
    rng = random.Random(2)
    assert policy.delay(3, None, rng) is None
    assert policy.delay(4, None, rng) is None
    assert policy.delay(3, 1.0, rng) is None
    assert policy.delay(1, 31.0, rng) is None  # a longer Retry-After than we wait gives up
    assert RetryPolicy(attempts=1).delay(1, None, rng) is None


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("3", 3.0),
        (" 10 ", 10.0),
        ("0", 0.0),
        (None, None),
        ("", None),
        ("-1", None),
        ("1.5", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", None),
    ],
)
def test_retry_after_header(header: str | None, seconds: float | None) -> None:
    assert parse_retry_after(header) == seconds


# -- token lifetime ---------------------------------------------------------------------------


def fake_jwt(claims: Any) -> str:
    def part(value: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


def test_jwt_lifetime_reads_exp_without_verifying() -> None:
    now = 1_800_000_000.0
    assert jwt_lifetime(fake_jwt({"sub": "u", "exp": int(now) + 3600}), now) == 3600.0
    assert jwt_lifetime(fake_jwt({"exp": now + 2.5}), now) == 2.5
    assert jwt_lifetime(fake_jwt({"exp": int(now) - 10}), now) == 0.0  # already expired


def test_a_token_lives_by_the_servers_clock_not_this_machines() -> None:
    server = 1_800_000_000.0  # the server's time; this machine's clock plays no part
    issued = fake_jwt({"iat": int(server), "exp": int(server) + 60})
    # exp − iat, both the server's, less the second iat was cut to
    assert token_lifetime(issued, server + 600) == 59.0
    assert token_lifetime(issued, None) == 59.0
    assert token_lifetime(fake_jwt({"iat": server + 0.5, "exp": server + 60.5}), None) == 60.0
    no_iat = fake_jwt({"exp": int(server) + 90})
    assert token_lifetime(no_iat, server) == 90.0  # exp − the tracked server time
    assert token_lifetime(fake_jwt({"sub": "u"}), server) == DEFAULT_LIFETIME  # the seed's 24 h


def test_a_token_expired_on_arrival_is_renewed_soon_and_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = 1_800_000_000.0
    stale = fake_jwt({"exp": int(server) - 5})
    with caplog.at_level("WARNING", "tradeterm.api"):
        assert token_lifetime(stale, server) == PAST_EXPIRY_RETRY  # not a silent 24 h
    assert "expired on arrival" in caplog.text
    token = Token.issued(stale, now_monotonic=100.0, server_now=server)
    assert token.seconds_left(100.0) == PAST_EXPIRY_RETRY


@pytest.mark.parametrize(
    "token",
    [
        "",
        "not-a-jwt",
        "a.b",
        "a.b.c.d",
        "a.!!!.c",
        fake_jwt({"sub": "u"}),
        fake_jwt({"exp": "tomorrow"}),
        fake_jwt({"exp": True}),
        fake_jwt({"exp": None}),
        fake_jwt([1, 2, 3]),
        fake_jwt("exp"),
        "eyJhbGciOiJIUzI1NiJ9." + base64.urlsafe_b64encode(b"\xff\xfe").decode() + ".x",
    ],
)
def test_jwt_lifetime_is_none_when_unreadable(token: str) -> None:
    assert jwt_lifetime(token, 0.0) is None


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(token=st.one_of(st.text(), st.builds(fake_jwt, st.dictionaries(st.text(), st.integers()))))
def test_jwt_lifetime_never_raises(token: str) -> None:
    lifetime = jwt_lifetime(token, 0.0)
    assert lifetime is None or lifetime >= 0


def test_token_is_renewed_before_it_expires() -> None:
    day = Token("opaque", issued_monotonic=1000.0, lifetime=DEFAULT_LIFETIME)
    assert day.renew_at() == 1000.0 + DEFAULT_LIFETIME - 300.0  # at most 5 min early
    short = Token("opaque", issued_monotonic=50.0, lifetime=3.0)
    assert short.renew_at() == pytest.approx(50.0 + 2.7)  # 10% of a short lifetime
    assert short.seconds_left(51.0) == pytest.approx(2.0)
    assert short.seconds_left(60.0) < 0


def test_token_lifetime_comes_from_the_jwt_or_defaults_to_24_hours() -> None:
    wall = 1_800_000_000.0
    issued = Token.issued(fake_jwt({"exp": int(wall) + 600}), now_monotonic=10.0, server_now=wall)
    assert issued.lifetime == 600.0
    assert issued.renew_at() == pytest.approx(10.0 + 600.0 - 60.0)
    opaque = Token.issued("opaque-token", now_monotonic=10.0)
    assert opaque.lifetime == DEFAULT_LIFETIME
    assert "opaque-token" not in repr(opaque)


# -- server clock -----------------------------------------------------------------------------


class FakeClocks:
    """A local wall clock and a monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.wall = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
        self.mono = 1000.0

    def now(self) -> datetime:
        return self.wall

    def monotonic(self) -> float:
        return self.mono

    def advance(self, seconds: float) -> None:
        self.wall += timedelta(seconds=seconds)
        self.mono += seconds

    def clock(self) -> ServerClock:
        return ServerClock(now=self.now, monotonic=self.monotonic)


def test_clock_narrows_to_the_intersection_of_its_samples() -> None:
    """A service-time answer bounds server time by the round trip; the intersection of
    recent samples is kept, so a short round trip dominates and a long one does not blur it."""
    fake = FakeClocks()
    clock = fake.clock()
    assert clock.due() and clock.offset == timedelta(0)
    server = fake.wall + timedelta(seconds=4.9)  # read mid-way: 0.1 s before now, 5 s ahead
    clock.observe_time(server, fake.mono - 0.2, fake.mono)
    assert clock.offset.total_seconds() == pytest.approx(5.0)
    assert clock.uncertainty == pytest.approx(0.1) and clock.round_trip == pytest.approx(0.2)
    fake.advance(1.0)
    slow = fake.wall + timedelta(seconds=4.0)  # 2 s round trip: its interval contains 5.0
    clock.observe_time(slow, fake.mono - 2.0, fake.mono)
    assert clock.offset.total_seconds() == pytest.approx(5.0)  # the slow sample changes nothing
    assert clock.uncertainty == pytest.approx(0.1)
    clock.observe_round_trip(0.3)
    assert clock.typical_round_trip == pytest.approx(0.3)  # median of 0.2, 2.0, 0.3
    assert not clock.due()
    fake.advance(clock.remeasure_every)
    assert clock.due()  # the low-rate re-measure


def test_a_wall_clock_jump_moves_the_offset_but_not_server_time() -> None:
    """Server time runs on the monotonic clock: a jump of the wall clock by ±600 s changes
    only the offset (server minus wall), is counted, and makes a re-measure due."""
    fake = FakeClocks()
    clock = fake.clock()
    clock.observe_time(fake.wall + timedelta(seconds=2), fake.mono - 0.01, fake.mono)
    server_before = clock.server_now()
    assert not clock.due()
    for jump in (600, -1200):
        fake.wall += timedelta(seconds=jump)
        assert clock.server_now() == server_before
        assert clock.due() and clock.jumps == (1 if jump == 600 else 2)
        expected = 2 - (600 if jump == 600 else -600)
        assert clock.offset.total_seconds() == pytest.approx(expected, abs=0.01)
    clock.observe_time(clock.server_now(), fake.mono - 0.01, fake.mono)  # the re-measure
    assert not clock.due()
    fake.advance(0.5)
    assert not clock.due() and clock.jumps == 2  # time passing is not a jump


def test_a_late_date_header_does_not_move_a_measured_offset() -> None:
    """A Date header that misses a measured service time by a second or so (cached or served late
    by a busy server) leaves the offset where the service time put it, and asks for a
    re-measure; the offset does not swing by the header's second."""
    fake = FakeClocks()
    clock = fake.clock()
    clock.observe_time(fake.wall + timedelta(seconds=0.3), fake.mono - 0.002, fake.mono)
    measured = clock.offset.total_seconds()
    assert measured == pytest.approx(0.3, abs=0.002) and not clock.due()
    fake.advance(5.0)
    late = fake.wall + timedelta(seconds=0.3 - 2.5)  # its second read 2.5 s before the truth
    clock.observe_date(late.replace(microsecond=0), fake.mono - 0.002, fake.mono)
    assert clock.offset.total_seconds() == pytest.approx(measured, abs=0.002)
    assert clock.due()  # the service time is asked again to settle it
    clock.observe_time(fake.wall + timedelta(seconds=0.3), fake.mono - 0.002, fake.mono)
    assert clock.offset.total_seconds() == pytest.approx(measured, abs=0.002)
    assert not clock.due()
    for _ in range(20):  # Date headers that agree keep it where it is
        fake.advance(0.37)
        clock.observe_date(
            (fake.wall + timedelta(seconds=0.3)).replace(microsecond=0),
            fake.mono - 0.002,
            fake.mono,
        )
        assert clock.offset.total_seconds() == pytest.approx(measured, abs=0.002)


class MovingServer:
    """A server whose clock the test sets: ``Date`` on every answer, ``/time`` in ms."""

    def __init__(self, shift: float) -> None:
        self.shift = shift  # server minus real wall, seconds
        self.times = 0

    def now(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self.shift)

    def handle(self, request: httpx.Request) -> httpx.Response:
        now = self.now()
        headers = {"Date": format_datetime(now, usegmt=True)}
        if request.url.path.endswith("/routing/time"):
            self.times += 1
            return httpx.Response(200, json={"time": format_timestamp(now)}, headers=headers)
        return httpx.Response(200, json={"info": {"service": "routing"}}, headers=headers)


@pytest.mark.anyio
async def test_the_offset_follows_a_server_whose_clock_moves() -> None:
    """Date headers alone keep the offset within their resolution; when the server's clock is
    stepped the old samples stop agreeing with the new, are dropped, and the service time is
    re-measured at once (``refresh_clock``)."""
    server = MovingServer(shift=5.0)
    transport = httpx.MockTransport(server.handle)
    async with ServiceClient(ClientSettings("http://server.test"), transport=transport) as api:
        await api.refresh_clock()  # never measured: due
        assert server.times == 1
        assert api.clock.offset.total_seconds() == pytest.approx(5.0, abs=0.05)
        await api.refresh_clock()
        assert server.times == 1  # not due again
        server.shift = 65.0
        await api.info()  # a Date header a minute ahead of every earlier sample
        assert api.clock.offset.total_seconds() == pytest.approx(65.0, abs=2.1)
        await api.refresh_clock()
        assert server.times == 2
        assert api.clock.offset.total_seconds() == pytest.approx(65.0, abs=0.05)
        server.shift = 60.0  # stepped back
        await api.info()
        assert api.clock.offset.total_seconds() == pytest.approx(60.0, abs=2.1)
        await api.refresh_clock()
        assert api.clock.offset.total_seconds() == pytest.approx(60.0, abs=0.05)
