"""Learning which account a finished sign-in is, where the Company says so (Ops 3; the readings
and their order are protocol/accounts.py's): the ID token the token answer carried, then the
userinfo endpoint the authorization server's metadata names (one GET with the new access token,
only on the Company's own hosts, bounded like every answer from a Company), then a JWT access
token's `sub`. Nothing here can fail a sign-in: a Company that says nothing usable leaves the
account unnamed, and an approval for it is then held until the person says whose it is
(agent/account_hold.py).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from collections.abc import Awaitable, Callable

from poppy_tui.agent.clock import now_utc
from poppy_tui.protocol import accounts
from poppy_tui.protocol.conventions import MAX_SIGNIN_ANSWER_BYTES

if TYPE_CHECKING:
    import httpx2

    from poppy_tui.protocol.signin import AuthServer, TokenResponse

log = logging.getLogger(__name__)


async def learn_account(
    server: AuthServer,
    tokens: TokenResponse,
    client_id: str,
    http: Callable[[], Awaitable[httpx2.AsyncClient]],
) -> str | None:
    """The account the Company says this sign-in is, or None. Never raises for what it answers."""
    now = now_utc()
    account, sub = accounts.id_token_account(tokens.id_token, server.issuer, client_id, now)
    if account is None and server.userinfo_endpoint is not None:
        account = await _userinfo(server, tokens.access_token, sub, http)
    if account is None:
        account = accounts.access_token_account(tokens.access_token, server.issuer, now)
    return account


async def _userinfo(
    server: AuthServer,
    access_token: str,
    expected_sub: str | None,
    http: Callable[[], Awaitable[httpx2.AsyncClient]],
) -> str | None:
    from poppy_tui.agent.net.http import HttpAnswer, request
    from poppy_tui.protocol.web_address import own_link

    url = server.userinfo_endpoint
    # The access token goes only where the Company's sign-in may send the person: its own hosts.
    if url is None or own_link(url, server.issuer, server.poppy_domains) is None:
        return None
    try:
        answer = await request(
            await http(),
            "GET",
            url,
            headers={"Authorization": f"Bearer {access_token}", "Accept": "application/json"},
            limit=MAX_SIGNIN_ANSWER_BYTES,
        )
    # A failure here means only that no account is learnt; its traceback goes to the log.
    except Exception:
        log.warning("reading the userinfo endpoint failed", exc_info=True)
        return None
    if not isinstance(answer, HttpAnswer) or answer.status != 200:
        return None
    return accounts.userinfo_account(answer.body, expected_sub)
