"""Deposits, withdrawals and transfer instructions.

Deposits arrive through the seed data, the paper-trading top-up route (a sandbox extension) or
the admin route; a deposit with ``pendingSeconds`` shows as ``pendingDeposit`` until the
background loop completes it. Withdrawals debit the free balance at once (no credit) and are
recorded ``completed``; a blockchain withdrawal must go to an address of the account's withdraw
instructions (a whitelist), on that address's network.

A withdrawal may carry a key (body ``clientRequestId`` or header ``Idempotency-Key``): within
24 h the same key with the same request replays the original answer (the withdrawal, or its
424) without moving money again; the same key with any field changed is 409 naming the fields
(Stripe's rule). Invalid requests (400) are not remembered.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from app.domain import Amount, ParseError, format_timestamp, utc_now
from app.domain.money import format_trimmed
from app.sandbox.auth import Principal
from app.sandbox.catalogue import ASSETS
from app.sandbox.store import Store
from app.sandbox.validation import (
    MAX_CLIENT_ORDER_ID,
    optional_string,
    positive_quantity,
    require_object,
)
from app.sandbox.wire import (
    ApiError,
    bad_request,
    booking_head,
    encode,
    error,
    order_refusal,
)

KEY_WINDOW = timedelta(hours=24)
#: Withdraw keys and the fingerprint of the request each was first used with. Created here,
#: not in the store's schema, so the table travels with the feature that owns it.
_KEYS_SCHEMA = """
CREATE TABLE IF NOT EXISTS withdraw_keys (
    account_id TEXT NOT NULL, request_key TEXT NOT NULL, fingerprint TEXT NOT NULL,
    created_at TEXT NOT NULL, transfer_id TEXT, http_status INTEGER NOT NULL, answer TEXT,
    PRIMARY KEY (account_id, request_key));
"""

OPERATIONS_USER = {
    "id": "ops-1",
    "email": "operations@sandbox.tradeterm.invalid",
    "name": "Sandbox Operations",
}


def user_object(principal: Principal) -> dict[str, str]:
    return {"id": principal.user_id, "email": principal.email, "name": principal.name}


class Transfers:
    def __init__(self, store: Store) -> None:
        self._store = store
        with store.transaction():
            store.execute(_KEYS_SCHEMA)

    # -- deposits -----------------------------------------------------------------------------

    def deposit(
        self,
        account_id: str,
        amount: Amount,
        *,
        network: str,
        by: dict[str, str],
        now: datetime,
        pending_seconds: float = 0,
    ) -> dict[str, Any]:
        """Record a deposit; credit it now, or after ``pending_seconds`` (then it is pending)."""
        transfer_id = str(uuid.uuid4())
        stamp = format_timestamp(now)
        with self._store.transaction(durable=True):
            ordering = self._store.next_ordering()
            row = {
                "ordering": ordering,
                "transfer_id": transfer_id,
                "kind": "deposit",
                "account_id": account_id,
                "asset": amount.asset,
                "amount": amount.value,
                "status": "pending",
                "method": "wire" if ASSETS[amount.asset].is_fiat else "blockchain",
                "network": network,
                "hash": _fake_hash(transfer_id),
                "created_at": stamp,
                "created_by": json.dumps(by),
                "complete_after": format_timestamp(now + timedelta(seconds=pending_seconds)),
            }
            self._store.insert("transfers", row)
            if pending_seconds <= 0:
                self._complete(row, ordering, now)
        return self.view(self._row(transfer_id))

    def complete_due(self, now: datetime) -> int:
        """Credit pending deposits whose time has come; returns how many."""
        due = self._store.query(
            "SELECT * FROM transfers WHERE kind = 'deposit' AND status = 'pending' "
            "AND complete_after <= ?",
            (format_timestamp(now),),
        )
        for row in due:
            with self._store.transaction():
                self._complete(dict(row), self._store.next_ordering(), now)
        return len(due)

    def _complete(self, row: dict[str, Any], ordering: int, now: datetime) -> None:
        stamp = format_timestamp(now)
        self._store.book(
            ordering=ordering,
            leg=0,
            account_id=row["account_id"],
            transaction_id=row["transfer_id"],
            asset=row["asset"],
            amount=Decimal(str(row["amount"])),
            event_type="deposit",
            event_time=stamp,
        )
        self._store.execute(
            "UPDATE transfers SET status = 'completed', completed_at = ?, completed_by = ? "
            "WHERE transfer_id = ?",
            (stamp, json.dumps(OPERATIONS_USER), row["transfer_id"]),
        )

    def pending_deposits(self, account_id: str) -> dict[str, Decimal]:
        sums: dict[str, Decimal] = {}
        for row in self._store.query(
            "SELECT asset, amount FROM transfers WHERE account_id = ? AND kind = 'deposit' "
            "AND status = 'pending'",
            (account_id,),
        ):
            sums[row["asset"]] = sums.get(row["asset"], Decimal(0)) + Decimal(row["amount"])
        return sums

    # -- withdrawals --------------------------------------------------------------------------

    def withdraw(
        self,
        principal: Principal,
        account_id: str,
        raw_body: Any,
        now: datetime,
        kind: str,
        *,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        body = require_object(raw_body)
        key = _request_key(body, idempotency_key)
        amount = _amount(body)
        method, network, address = self._destination(body, account_id, amount, kind)
        fingerprint = {
            "type": kind,
            "amount": f"{format_trimmed(amount.value)} {amount.asset}",
            "method": method,
            "networkType": network,
            "address": address,
        }
        transfer_id = str(uuid.uuid4())
        with self._store.transaction(durable=True):
            now = max(now, utc_now())  # read inside the transaction that books
            stamp = format_timestamp(now)
            if key is not None:
                replayed = self._replay(account_id, key, fingerprint, now)
                if replayed is not None:
                    return replayed
            free = self._store.balance(account_id, amount.asset).available_funds
            if amount.value > free:
                refusal = order_refusal(
                    424,
                    transfer_id,
                    f"Insufficient Funds: Requested {format_trimmed(amount.value)} {amount.asset} "
                    f"but only {format_trimmed(free)} {amount.asset} is available",
                    trades=False,
                )
                if key is None:
                    raise refusal
                self._remember(account_id, key, fingerprint, stamp, None, refusal)
                refused = refusal
            else:
                refused = None
                ordering = self._store.next_ordering()
                self._store.book(
                    ordering=ordering,
                    leg=0,
                    account_id=account_id,
                    transaction_id=transfer_id,
                    asset=amount.asset,
                    amount=-amount.value,
                    event_type="withdrawal",
                    event_time=stamp,
                )
                by = json.dumps(user_object(principal))
                self._store.insert(
                    "transfers",
                    {
                        "ordering": ordering,
                        "transfer_id": transfer_id,
                        "kind": "withdrawal",
                        "account_id": account_id,
                        "asset": amount.asset,
                        "amount": amount.value,
                        "status": "completed",
                        "method": method,
                        "network": network,
                        "address": address,
                        "hash": _fake_hash(transfer_id) if kind == "blockchain" else None,
                        "created_at": stamp,
                        "created_by": by,
                        "completed_at": stamp,
                        "completed_by": json.dumps(OPERATIONS_USER),
                    },
                )
                if key is not None:
                    self._remember(account_id, key, fingerprint, stamp, transfer_id, None)
        if refused is not None:
            raise refused  # after the commit that remembered it
        return self.view(self._row(transfer_id))

    def _destination(
        self, body: dict[str, Any], account_id: str, amount: Amount, kind: str
    ) -> tuple[str, str | None, str | None]:
        """Method, network and address of a withdrawal; a blockchain address must be on the
        account's whitelist (its withdraw instructions)."""
        spec = ASSETS[amount.asset]
        address = network = None
        if kind == "fiat":
            if not spec.is_fiat:
                raise bad_request(
                    f"{amount.asset} is not a fiat asset; use a blockchain withdrawal"
                )
            method = body.get("method", "wire")
            if method != "wire":
                raise bad_request("method must be wire")
        else:
            if spec.is_fiat:
                raise bad_request(f"{amount.asset} is a fiat asset; use a fiat withdrawal")
            network, address = body.get("networkType"), body.get("address")
            if not isinstance(network, str) or not isinstance(address, str):
                raise bad_request("networkType and address are required strings")
            allowed = {
                (i.get("asset"), i.get("networkType"), i.get("address"))
                for i in self.instructions(account_id, "withdraw")
            }
            if (amount.asset, network, address) not in allowed:
                raise bad_request(
                    f"{address} on {network} is not a whitelisted {amount.asset} address of this "
                    "account; see the withdraw instructions"
                )
            method = "blockchain"
        return method, network, address

    def _replay(
        self, account_id: str, key: str, fingerprint: dict[str, Any], now: datetime
    ) -> dict[str, Any] | None:
        """The original answer to ``key`` when the request is the same; 409 naming the fields
        when it is not; None when the key is new (or older than 24 h)."""
        row = self._store.query_one(
            "SELECT * FROM withdraw_keys WHERE account_id = ? AND request_key = ? "
            "AND created_at >= ?",
            (account_id, key, format_timestamp(now - KEY_WINDOW)),
        )
        if row is None:
            return None
        original = json.loads(row["fingerprint"])
        differs = [
            f"{name} differs ({given or 'none'} here, {original.get(name) or 'none'} in the "
            "original)"
            for name, given in fingerprint.items()
            if original.get(name) != given
        ]
        if differs:
            raise error(
                409,
                f"withdraw request key {key} was already used within 24 h for a different "
                f"request: {'; '.join(differs)}; use a new key",
            )
        if row["transfer_id"] is None:
            raise ApiError(int(row["http_status"]), json.loads(row["answer"]))
        return self.view(self._row(row["transfer_id"]))

    def _remember(
        self,
        account_id: str,
        key: str,
        fingerprint: dict[str, Any],
        stamp: str,
        transfer_id: str | None,
        refusal: ApiError | None,
    ) -> None:
        self._store.execute(
            "INSERT OR REPLACE INTO withdraw_keys (account_id, request_key, fingerprint, "
            "created_at, transfer_id, http_status, answer) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                account_id,
                key,
                json.dumps(fingerprint, sort_keys=True),
                stamp,
                transfer_id,
                200 if refusal is None else refusal.status_code,
                None if refusal is None else encode(refusal.body),
            ),
        )

    # -- reading ------------------------------------------------------------------------------

    def query(
        self, account_id: str, kind: str, limit: int, ascending: bool
    ) -> list[dict[str, Any]]:
        direction = "ASC" if ascending else "DESC"
        rows = self._store.query(
            "SELECT * FROM transfers WHERE account_id = ? AND kind = ? "  # noqa: S608 - ours
            f"ORDER BY ordering {direction} LIMIT ?",
            (account_id, kind, limit),
        )
        return [self.view(row) for row in rows]

    def _row(self, transfer_id: str) -> Any:
        return self._store.query_one(
            "SELECT * FROM transfers WHERE transfer_id = ?", (transfer_id,)
        )

    @staticmethod
    def view(row: Any) -> dict[str, Any]:
        record: dict[str, Any] = {
            **booking_head(row, "transfer_id"),
            "status": row["status"],
            "network": row["network"] or "",
            "hash": row["hash"] or "",
            "created": {"at": row["created_at"], "user": json.loads(row["created_by"])},
        }
        if row["completed_at"]:
            record["completed"] = {
                "at": row["completed_at"],
                "user": json.loads(row["completed_by"]),
            }
        if row["kind"] == "withdrawal":
            record["type"] = "fiat" if row["method"] == "wire" else "blockchain"
            record["method"] = row["method"]
            if row["address"]:
                record["address"] = row["address"]
        return record

    # -- instructions -------------------------------------------------------------------------

    def set_instructions(
        self, account_id: str, direction: str, items: list[dict[str, str]]
    ) -> None:
        with self._store.transaction():
            self._store.execute(
                "DELETE FROM instructions WHERE account_id = ? AND direction = ?",
                (account_id, direction),
            )
            for position, item in enumerate(items):
                self._store.insert(
                    "instructions",
                    {
                        "account_id": account_id,
                        "direction": direction,
                        "position": position,
                        "body": json.dumps(item),
                    },
                )

    def instructions(self, account_id: str, direction: str) -> list[dict[str, str]]:
        rows = self._store.query(
            "SELECT body FROM instructions WHERE account_id = ? AND direction = ? "
            "ORDER BY position",
            (account_id, direction),
        )
        return [json.loads(row["body"]) for row in rows]


def _amount(body: dict[str, Any]) -> Amount:
    raw = body.get("amount")
    asset_code: Any
    if isinstance(raw, str) and len(raw.split()) == 2:
        try:
            asset_code = Amount.parse(raw, "amount").asset
        except ParseError as exc:
            raise bad_request(f"Invalid amount: {exc.problem}") from None
    else:
        asset_code = body.get("asset")
    if not isinstance(asset_code, str) or asset_code not in ASSETS:
        raise bad_request(f"Unknown or missing asset {asset_code!r}; give amount as '0.5 BTC'")
    value = positive_quantity(raw, "amount", ASSETS[asset_code])
    return Amount(value, asset_code)


def _request_key(body: dict[str, Any], header: str | None) -> str | None:
    """The withdrawal's idempotency key: body ``clientRequestId`` or header ``Idempotency-Key``
    (both may be sent, but then they must agree)."""
    from_body = optional_string(body, "clientRequestId", MAX_CLIENT_ORDER_ID)
    if header is not None and not 0 < len(header) <= MAX_CLIENT_ORDER_ID:
        raise bad_request(f"Idempotency-Key must be 1 to {MAX_CLIENT_ORDER_ID} characters")
    if from_body is not None and header is not None and from_body != header:
        raise bad_request("clientRequestId and the Idempotency-Key header differ; send one key")
    return from_body or header


def _fake_hash(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()
