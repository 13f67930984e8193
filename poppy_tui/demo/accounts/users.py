"""The demo Company's one account, its scopes, and which scopes each action needs.

The credentials are public on purpose: `poppy-tui --demo` prints them and
docs/demo-company.md lists them. Mediated Sign-In asks this account for a one-time
code as its second step, the way a Company that emails a code would.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from poppy_tui.protocol import conventions as c

DEMO_USERNAME = "river@manzanita.example"
DEMO_PASSWORD = "trail-mix-2026"
DEMO_ONE_TIME_CODE = "482916"

SCOPE_BOOKINGS = "bookings"
CUSTOM_SCOPES = {SCOPE_BOOKINGS: "Move your fitting appointments (a $10.00 change fee applies)"}
SCOPE_DESCRIPTIONS = {
    c.SCOPE_READ: "See your orders, your subscription and your bookings",
    c.SCOPE_WRITE: "Ask to exchange items and cancel your subscription (each needs your approval)",
    **CUSTOM_SCOPES,
}
DIRECT_SCOPES = (c.SCOPE_READ, c.SCOPE_WRITE, SCOPE_BOOKINGS)
DEVICE_SCOPES = (c.SCOPE_READ, c.SCOPE_WRITE, SCOPE_BOOKINGS)
# Mediated Sign-In relays a password through the agent, so it gets less: no bookings.
MEDIATED_SCOPES = (c.SCOPE_READ, c.SCOPE_WRITE)
ALL_SCOPES = tuple(dict.fromkeys(DIRECT_SCOPES + DEVICE_SCOPES + MEDIATED_SCOPES))

# What a request needs, by what it does. Browsing the catalogue needs nothing.
READ_NEEDS = (c.SCOPE_READ,)
ACTION_NEEDS = {
    "exchange": (c.SCOPE_WRITE,),
    "cancel_subscription": (c.SCOPE_WRITE,),
    "change_booking": (c.SCOPE_WRITE, SCOPE_BOOKINGS),
}


@dataclass(frozen=True)
class Account:
    account_id: str
    username: str
    display_name: str
    password: str
    one_time_code: str | None  # asked by Mediated Sign-In after the password


DEMO_ACCOUNT = Account(
    "acct_river", DEMO_USERNAME, "River Alvarez", DEMO_PASSWORD, DEMO_ONE_TIME_CODE
)


class Directory:
    """The Company's accounts (one, for the demo)."""

    def __init__(self, accounts: tuple[Account, ...] = (DEMO_ACCOUNT,)) -> None:
        self._by_username = {a.username.casefold(): a for a in accounts}
        self._by_id = {a.account_id: a for a in accounts}

    def check_password(self, username: str, password: str) -> Account | None:
        account = self._by_username.get(username.strip().casefold())
        # Compare in constant time, and compare something even for an unknown name.
        expected = account.password if account else "\0" * max(1, len(password))
        matches = hmac.compare_digest(expected.encode(), password.encode())
        return account if account is not None and matches else None

    def get(self, account_id: str) -> Account | None:
        return self._by_id.get(account_id)


def parse_scope(value: str | None) -> tuple[str, ...]:
    return tuple(dict.fromkeys((value or "").split()))
