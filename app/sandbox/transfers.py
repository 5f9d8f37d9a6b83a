"""Deposits, withdrawals and transfer instructions.

Deposits arrive through the seed data, the paper-trading top-up route (a sandbox extension) or
the admin route; a deposit with ``pendingSeconds`` shows as ``pendingDeposit`` until the
background loop completes it. Withdrawals debit the free balance at once (no credit) and are
recorded ``completed``; a blockchain withdrawal must go to an address of the account's withdraw
instructions (a whitelist), on that address's network.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from app.domain import Amount, ParseError, format_timestamp
from app.domain.money import format_trimmed
from app.sandbox.auth import Principal
from app.sandbox.catalogue import ASSETS
from app.sandbox.store import Store
from app.sandbox.validation import positive_quantity, require_object
from app.sandbox.wire import bad_request, order_refusal

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
        with self._store.transaction():
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
        self, principal: Principal, account_id: str, raw_body: Any, now: datetime, kind: str
    ) -> dict[str, Any]:
        body = require_object(raw_body)
        amount = _amount(body)
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
        transfer_id = str(uuid.uuid4())
        stamp = format_timestamp(now)
        with self._store.transaction():
            free = self._store.balance(account_id, amount.asset).available_funds
            if amount.value > free:
                raise order_refusal(
                    424,
                    transfer_id,
                    f"Insufficient Funds: Requested {format_trimmed(amount.value)} {amount.asset} "
                    f"but only {format_trimmed(free)} {amount.asset} is available",
                    trades=False,
                )
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
        return self.view(self._row(transfer_id))

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
            "ordering": row["ordering"],
            "accountId": row["account_id"],
            "transactionId": row["transfer_id"],
            "asset": row["asset"],
            "amount": Decimal(row["amount"]),
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


def _fake_hash(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()
