"""What a trader is shown of a client message: no URL (the log keeps it), no word twice."""

from __future__ import annotations

import pytest

from app.domain.words import in_words, service_at


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        (
            "cannot reach http://127.0.0.1:4321/api/v1/routing/account/a/topofbook: refused",
            "cannot reach the service at 127.0.0.1:4321: refused",
        ),
        (
            "no answer from https://trade.example.com/api/v1/x?account=a&page=2 in time (read)",
            "no answer from the service at trade.example.com in time (read)",
        ),
        (
            "Cannot reach https://trade.example.com.",
            "Cannot reach the service at trade.example.com.",
        ),
        ('see "https://user:secret@h.example:8443/p"', 'see "the service at h.example:8443"'),
        ("the the service is down", "the service is down"),
        ("order refused: refused: not enough USD", "order refused: not enough USD"),
        ("cannot reach cannot reach the service", "cannot reach the service"),
        ("1 1 BTC at 100 100", "1 1 BTC at 100 100"),  # numbers are data, never collapsed
        ("nothing to change", "nothing to change"),
    ],
)
def test_in_words(message: str, shown: str) -> None:
    assert in_words(message) == shown


def test_service_at_names_only_the_host_and_port() -> None:
    assert service_at("http://127.0.0.1:5000/api/v1/x?y=1#z") == "the service at 127.0.0.1:5000"
    assert service_at("https://u:pw@host.example/") == "the service at host.example"
    assert service_at("not a url") == "the service"
