"""Clients created on first start of a new database, and the helper the admin route reuses.

Addresses are deterministic look-alikes derived from the account id; they are not real
addresses on any chain and must never be used outside the sandbox.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from app.domain import Amount, format_timestamp
from app.sandbox.auth import hash_digest, password_digest
from app.sandbox.store import Store
from app.sandbox.transfers import OPERATIONS_USER, Transfers

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


@dataclass(frozen=True)
class DemoClient:
    user: str
    password: str
    account: str
    name: str
    account_name: str
    balances: dict[str, str]
    credit: dict[str, str]
    #: (amount, network, days ago) of completed deposits
    deposits: tuple[tuple[str, str, int], ...]


DEMO_CLIENTS = (
    DemoClient(
        user="demo",
        password="demo",  # noqa: S106 - the documented demo login
        account="demo",
        name="Demo Trader",
        account_name="Demo Trading Account",
        balances={"USD": "1000000", "USDT": "500000", "BTC": "12.5", "ETH": "150", "SOL": "2500"},
        credit={"USD": "-250000"},
        deposits=(("2.5 BTC", "bitcoin", 3), ("100000 USDT", "tron", 2), ("25 ETH", "ethereum", 1)),
    ),
    DemoClient(
        user="demo2",
        password="demo2",  # noqa: S106 - the documented demo login
        account="demo2",
        name="Second Demo Trader",
        account_name="Demo Desk Two",
        balances={"USD": "250000", "USDT": "100000", "BTC": "2", "ETH": "40", "SOL": "500"},
        credit={"USD": "-100000"},
        deposits=(
            ("0.75 BTC", "bitcoin", 5),
            ("20000 USDT", "ethereum", 4),
            ("300 SOL", "solana", 2),
        ),
    ),
)


def _encoded(seed: str, alphabet: str, length: int) -> str:
    digest = hashlib.sha256(seed.encode()).digest() * 2
    return "".join(alphabet[b % len(alphabet)] for b in digest[:length])


def sandbox_address(account_id: str, asset: str, network: str, direction: str) -> str:
    seed = f"{account_id}:{asset}:{network}:{direction}"
    if network == "bitcoin":
        return "bc1q" + _encoded(seed, "023456789acdefghjklmnpqrstuvwxyz", 38)
    if network == "ethereum":
        return "0x" + hashlib.sha256(seed.encode()).hexdigest()[:40]
    if network == "tron":
        return "T" + _encoded(seed, _B58, 33)
    return _encoded(seed, _B58, 44)


def deposit_instructions(account_id: str) -> list[dict[str, str]]:
    chains = [
        ("BTC", "bitcoin"),
        ("ETH", "ethereum"),
        ("USDT", "ethereum"),
        ("USDT", "tron"),
        ("SOL", "solana"),
    ]
    items = [
        {
            "asset": asset,
            "assetType": "blockchain",
            "networkType": network,
            "address": sandbox_address(account_id, asset, network, "deposit"),
        }
        for asset, network in chains
    ]
    items.append(
        {
            "asset": "USD",
            "assetType": "fiat",
            "method": "wire",
            "bankName": "Sandbox Bank, N.A.",
            "bankAddress": "1 Example Plaza, New York, NY 10004, USA",
            "bankRoutingNumber": "021000021",
            "bankSwiftNumber": "SBOXUS33",
            "beneficiaryName": "Tradeterm Sandbox Custody LLC",
            "beneficiaryAddress": "100 Paper Street, Wilmington, DE 19801, USA",
            "beneficiaryAccountNumber": "000" + _encoded(account_id, "0123456789", 9),
            "specialInstructions": f"Reference account {account_id} in the wire memo",
        }
    )
    return items


def withdraw_instructions(account_id: str) -> list[dict[str, str]]:
    chains = [("BTC", "bitcoin"), ("ETH", "ethereum"), ("USDT", "tron"), ("SOL", "solana")]
    return [
        {
            "asset": asset,
            "assetType": "blockchain",
            "networkType": network,
            "address": sandbox_address(account_id, asset, network, "withdraw"),
        }
        for asset, network in chains
    ]


def create_client(
    store: Store,
    *,
    user: str,
    password_hex: str,
    account: str,
    name: str,
    account_name: str,
    balances: dict[str, str],
    credit: dict[str, str],
    now: datetime,
) -> None:
    """A user owning one client account, funded by ``initialBalances`` ledger entries."""
    salt, hashed = hash_digest(password_hex)
    transfers = Transfers(store)
    stamp = format_timestamp(now)
    with store.transaction():
        store.insert(
            "users",
            {
                "user_id": user,
                "email": f"{user}@sandbox.tradeterm.invalid",
                "name": name,
                "pw_salt": salt,
                "pw_hash": hashed,
            },
        )
        store.insert(
            "accounts",
            {"account_id": account, "owner": user, "type": "client", "name": account_name},
        )
        for asset, amount in balances.items():
            store.book(
                ordering=store.next_ordering(),
                leg=0,
                account_id=account,
                transaction_id=f"initial-{account}-{asset}",
                asset=asset,
                amount=Decimal(amount),
                event_type="initialBalances",
                event_time=stamp,
            )
        for asset, limit in credit.items():
            store.set_credit_limit(account, asset, Decimal(limit))
    transfers.set_instructions(account, "deposit", deposit_instructions(account))
    transfers.set_instructions(account, "withdraw", withdraw_instructions(account))


def seed_demo(store: Store, now: datetime) -> bool:
    """Create the demo clients in a new database; False when it already has them."""
    if store.get_meta("seeded") == "1":
        return False
    transfers = Transfers(store)
    for client in DEMO_CLIENTS:
        create_client(
            store,
            user=client.user,
            password_hex=password_digest(client.password),
            account=client.account,
            name=client.name,
            account_name=client.account_name,
            balances=client.balances,
            credit=client.credit,
            now=now - timedelta(days=7),
        )
        for text, network, days_ago in client.deposits:
            transfers.deposit(
                client.account,
                Amount.parse(text),
                network=network,
                by=OPERATIONS_USER,
                now=now - timedelta(days=days_ago),
            )
    with store.transaction():
        store.set_meta("seeded", "1")
    return True
