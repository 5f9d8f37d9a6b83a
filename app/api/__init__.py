"""The service's HTTP client: one httpx.AsyncClient, one method per operation, typed errors."""

from app.api.auth import Credentials, HashedPassword, Password, password_digest
from app.api.backoff import RetryPolicy
from app.api.client import ServiceClient, new_client_order_id
from app.api.clock import ServerClock
from app.api.errors import (
    BadResponse,
    CreditNotAvailable,
    Forbidden,
    InsufficientFunds,
    InvalidRequest,
    LoginExpired,
    LoginThrottled,
    NetworkError,
    NotFound,
    NotSent,
    OutcomeUnknown,
    RateLimited,
    Refused,
    RequestTimeout,
    ServerError,
    ServiceError,
    TooLate,
    Unauthorized,
)
from app.api.http import ClientSettings, SentRequest

__all__ = [
    "BadResponse",
    "ClientSettings",
    "Credentials",
    "CreditNotAvailable",
    "Forbidden",
    "HashedPassword",
    "InsufficientFunds",
    "InvalidRequest",
    "LoginExpired",
    "LoginThrottled",
    "NetworkError",
    "NotFound",
    "NotSent",
    "OutcomeUnknown",
    "Password",
    "RateLimited",
    "Refused",
    "RequestTimeout",
    "RetryPolicy",
    "SentRequest",
    "ServerClock",
    "ServerError",
    "ServiceClient",
    "ServiceError",
    "TooLate",
    "Unauthorized",
    "new_client_order_id",
    "password_digest",
]
