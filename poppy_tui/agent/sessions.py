"""Sessions with Companies: identity, the headers on every request, and what invalid_session means.

Every choice about Sessions is made here and nowhere else:
- one pairwise User ID and one current Session per Company (kept in the store's companies table);
- a fresh Session JWT for every HTTP request, addressed to CompanyDocument.audience;
- `Poppy-Extensions` only when the Company's poppy.json lists operations v2;
- after 403 invalid_session, a request without an approval starts a new Session and is tried
  once more; a request carrying an approval is never moved to another Session, because an
  operation returned signed out can be approved only in its own Session (Ops 3), unless the
  operation was returned signed in: it belongs to the account and any signed-in Session may
  approve it;
- `Authorization: Bearer` beside `Poppy-Session` when the agent is signed in at the Company
  (the token comes from `Agent.access_token_source`, plugged in by agent/signin);
- each Session JWT is signed while the request before it waits for its answer, when it can be
  (a "spare": `sign_spares`), and is used at most once, within SPARE_JWT_MAX_AGE_SECONDS.
"""

from __future__ import annotations

import logging
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from collections.abc import Awaitable, Callable

from poppy_tui.agent.store import CompanyRecord, Store
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.errors import ProtocolError
from poppy_tui.protocol.extensions import OPERATIONS_HEADER_VALUE
from poppy_tui.protocol.challenges import Challenge
from poppy_tui.protocol.session_jwt import SessionIdentity, session_claims

if TYPE_CHECKING:
    from poppy_tui.agent.identity import AgentIdentity

INVALID_SESSION = "invalid_session"

# The sign-in (sign_ins.signed_in_at) an account-owned operation's approval may go with, as
# agent/account_hold.py found it to be that operation's account just before the send (None for
# every other request; "" when no sign-in was recorded there). A token read while another sign-in
# is current must not carry it (Ops 3):
# access_token raises SignInChanged instead of handing one out, before any header is built, so
# nothing leaves; the hold is then looked at again.
approval_for_account: ContextVar[str | None] = ContextVar("approval_for_account", default=None)


class SignInChanged(Exception):
    """Another sign-in than the one the approval was cleared for is current at the Company."""


# How long a spare Session JWT may wait for the request that uses it. Well inside the JWT's own
# lifetime (exp is iat + SESSION_JWT_LIFETIME_SECONDS), so a Company never sees one near its end.
SPARE_JWT_MAX_AGE_SECONDS = 5.0
# Whether the requests made in this context want spares. The dispatcher's concurrent sends set it
# False in their tasks and sign their own: between a batch's sends the loop is never idle, so a
# spare saves them nothing, and signing one between two sends held up the batch (measured: 1,000
# approvals were delivered ~10% slower).
spares_wanted: ContextVar[bool] = ContextVar("poppy_spares_wanted", default=True)
log = logging.getLogger(__name__)


async def _signed_out(company: CompanyRecord) -> str | None:
    return None


def describe_challenge(company_name: str, challenge: Challenge, client_id: str) -> str:
    """One line for the TUI, the CLI and the history; the Company's own words are sanitised."""
    from poppy_tui.safety.sanitize import (
        sanitize_line,
    )  # here: a request without a challenge never loads it

    name = sanitize_line(company_name, 80).text
    said = sanitize_line(challenge.description, 200).text if challenge.description else ""
    if challenge.kind == "identity":
        line = (
            f"{name} did not accept this agent's identity (its Client ID Metadata Document {client_id}): "
            f"{said or challenge.error}"
        )
        if client_id.startswith("http://"):
            line += ". A development identity works only with Companies on this computer; run poppy-tui identity init --client-id https://..."
        return line
    scopes = " ".join(sanitize_line(s, 60).text for s in challenge.scopes)
    if challenge.kind == "scope":
        return (
            f"Sign in to {name} to continue (it needs more access: scopes {scopes or 'not named'})"
        )
    return f"Sign in to {name} to continue" + (f" (scopes {scopes})" if scopes else "")


def is_invalid_session(status: int | None, body: Any) -> bool:
    return status in (401, 403) and isinstance(body, dict) and body.get("error") == INVALID_SESSION


@dataclass(frozen=True)
class _Spare:
    """A Session JWT signed ahead, for the next request in its Session (Sessions.sign_spares)."""

    token: str
    signer: AgentIdentity
    signed_at: float  # time.time() when its claims were made (its iat is the whole seconds)

    def usable_by(self, signer: AgentIdentity, now: float) -> bool:
        # The same key object (a new identity or key means a new signer), and fresh: a clock
        # moved back makes the age negative, and such a spare is dropped too.
        return signer is self.signer and 0.0 <= now - self.signed_at <= SPARE_JWT_MAX_AGE_SECONDS


@dataclass(frozen=True)
class SessionVerdict:
    """What to do after a Company said the Session is invalid."""

    retry: bool  # send again in the (new) Session
    company: CompanyRecord  # the Company record after any renewal
    detail: str


class Sessions:
    def __init__(
        self,
        store: Store,
        identity_loader: Callable[[], AgentIdentity],
        allow_loopback: bool = False,
    ) -> None:
        self._store = store
        self._identity_loader = identity_loader
        self._identity: AgentIdentity | None = None
        self._allow_loopback = allow_loopback
        self._audiences: dict[tuple[int, str], str] = {}
        # `Agent.access_token_source`, read through the Agent so a later assignment counts.
        self.token_source: Callable[[CompanyRecord], Awaitable[str | None]] = _signed_out
        self._lock = threading.Lock()
        # Why spares: signing (ES256) is the largest part of what a request costs the agent before
        # it leaves, and the agent has nothing else to do while the previous request awaits its
        # answer. Keyed by everything a Session JWT's claims name but the times and the jti.
        self._spares: dict[tuple[SessionIdentity, str], _Spare] = {}
        self._spares_wanted: dict[tuple[SessionIdentity, str], AgentIdentity] = {}

    @property
    def agent_identity(self) -> AgentIdentity:
        # Loaded on first use, so opening the agent to browse history never touches the keyring.
        with self._lock:
            if self._identity is None:
                self._identity = self._identity_loader()
            return self._identity

    def audience(self, company: CompanyRecord) -> str:
        cache_key = (company.id, company.updated_at)
        audience = self._audiences.get(cache_key)
        if audience is None:
            try:
                document = parse_poppy_json(company.document, company.domain, self._allow_loopback)
                audience = document.audience
            except ProtocolError:
                # The stored document was validated when it was discovered; if a newer
                # poppy-tui reads it differently, address the Company by its domain.
                audience = f"https://{company.domain}"
            self._audiences[cache_key] = audience
        return audience

    def identity(self, company: CompanyRecord, session_id: str | None = None) -> SessionIdentity:
        return SessionIdentity(
            client_id=self.agent_identity.client_id,
            user_id=company.user_id,
            session_id=session_id or company.session_id,
        )

    def session_jwt(self, company: CompanyRecord, session_id: str | None = None) -> str:
        """A Session JWT never used before: the spare signed for this Session while the last
        request waited, if it is still fresh, else one signed now. Either way the next request
        in this Session wants a spare, which sign_spares makes while this one waits."""
        key = (self.identity(company, session_id), self.audience(company))
        signer = self.agent_identity
        if spares_wanted.get():
            self._spares_wanted[key] = signer
        spare = self._spares.pop(key, None)  # used once at most, fresh or not
        if spare is not None and spare.usable_by(signer, time.time()):
            return spare.token
        return signer.sign(session_claims(*key), c.SESSION_JWT_TYP)

    def sign_spares(self) -> None:
        """Sign the next Session JWT for each Session a request used since the last call, unless
        one is ready: the HTTP client calls this when a request has been sent and its answer is
        awaited (agent/net/http.py make_client). Only identities already loaded sign, so this never
        reaches the keyring; and it never raises into the request that called it."""
        wanted, self._spares_wanted = self._spares_wanted, {}
        now = time.time()
        for key, spare in list(self._spares.items()):
            if not spare.usable_by(spare.signer, now):
                self._spares.pop(key, None)  # nobody came for it in time
        for key, signer in wanted.items():
            if key in self._spares:
                continue
            now = time.time()
            try:
                token = signer.sign(session_claims(*key, now=now), c.SESSION_JWT_TYP)
            except Exception:  # the next request signs its own, and says why if it can't
                log.debug("a spare Session JWT could not be signed", exc_info=True)
                continue
            self._spares[key] = _Spare(token, signer, now)

    def headers(self, company: CompanyRecord, session_id: str | None = None) -> dict[str, str]:
        """Fresh for every HTTP request: a Session JWT is never reused (its jti is single-use)."""
        headers = {
            c.HEADER_SESSION: self.session_jwt(company, session_id),
            c.HEADER_VERSION: c.POPPY_VERSION,
        }
        if self.declares_operations(company):
            headers[c.HEADER_EXTENSIONS] = OPERATIONS_HEADER_VALUE
        return headers

    def challenge_detail(self, company: CompanyRecord, challenge: Challenge) -> str:
        return describe_challenge(company.name, challenge, self.agent_identity.client_id)

    async def access_token(self, company: CompanyRecord) -> str | None:
        """The access token a signed-in request carries, or None (signed out). A token source
        that fails leaves the request signed out rather than unsent: the Company then answers
        with a challenge the person can act on."""
        try:
            token = await self.token_source(company)
        except Exception:  # sign-in trouble must not turn into "not sent"
            log.warning(
                "the access token for company %s could not be read", company.id, exc_info=True
            )
            return None
        token = token if isinstance(token, str) and token else None
        cleared = approval_for_account.get()
        if cleared is not None and token is not None:
            # Read after the token: another sign-in that landed while it was fetched shows here.
            from poppy_tui.agent.store.sign_ins import get_sign_in  # only for an approval's send

            record = get_sign_in(self._store, company.id)
            now = record.signed_in_at if record is not None else ""
            if now != cleared:
                raise SignInChanged()
        return token

    def signed_in_account(self, company: CompanyRecord) -> str | None:
        """The account the agent is signed in as at this Company, where the sign-in named it
        (sign_ins.account); None when signed out or not named. Read beside the access token."""
        from poppy_tui.agent.store.owning_account import account_signed_in_now

        return account_signed_in_now(self._store, company.id)

    async def signed_in_headers(
        self, company: CompanyRecord, session_id: str | None = None, token: str | None = None
    ) -> dict[str, str]:
        """headers() plus `Authorization: Bearer` when signed in (spec 5: beside Poppy-Session)."""
        headers = self.headers(company, session_id)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    @staticmethod
    def declares_operations(company: CompanyRecord) -> bool:
        return company.supports_operations

    def current(self, company: CompanyRecord) -> CompanyRecord:
        """The Company as stored now: another process may have started a new Session."""
        return self._store.get_company(company.id)

    def on_invalid_session(
        self,
        company: CompanyRecord,
        session_id_used: str,
        carries_approval: bool,
        already_retried: bool,
        account_owned: bool = False,
    ) -> SessionVerdict:
        """`account_owned`: the approval is for an operation returned signed in, which any
        signed-in Session of this agent and User may approve (Ops 3), so it may move."""
        latest = self.current(company)
        if latest.session_id == session_id_used:
            latest = self._store.new_session(company.id)
        if carries_approval and account_owned and not already_retried:
            return SessionVerdict(
                True,
                latest,
                "the Session had ended; the account's operation was approved in a new one",
            )
        if carries_approval and not account_owned:
            return SessionVerdict(
                False,
                latest,
                "the Company ended the Session this operation was returned in (invalid_session); an "
                "operation can be approved only in its own Session, so the approval was not moved to a "
                "new one. Ask the Company again to get a new operation.",
            )
        if already_retried:
            return SessionVerdict(
                False, latest, "the Company rejected a new Session too (invalid_session)"
            )
        return SessionVerdict(
            True, latest, "the Session had ended; started a new one and tried again"
        )
