"""`SignIns`: the agent's one door to signing in and out, and to the access token a request carries.

- begin() binds the issuer (RFC 8414 metadata: `issuer` equal to auth.issuer character for
  character, `poppy_domains` holding organization.domain) before any sign-in starts, then hands
  back the flow for the kind asked (Device, Direct or Mediated).
- A finished sign-in keeps the refresh token where the signing key lives (keyring or opt-in file), the access token in memory, and
  the granted scopes (not secret) in the store's sign_ins table.
- access_token() is `Agent.access_token_source`: the current access token, refreshed
  ACCESS_TOKEN_REFRESH_MARGIN_SECONDS before it expires; None when signed out.
- sign_out() revokes the refresh token (RFC 7009, token_type_hint=refresh_token) and deletes
  the tokens; Sessions go on signed out.
- token_refused() hears that a Company answered a token with 401 invalid_token: the token is
  dropped and renewed once with the refresh token; when it can't be, the sign-in is ended, so
  the person is asked to sign in again (and `signin` does not answer "already signed in").
- An access token in memory belongs to the sign-in it came from (sign_ins.signed_in_at): a
  sign-in made since, in another process too, is read from the store and replaces it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import httpx2

from poppy_tui.safety.wording import possessive
from poppy_tui.agent.companies import DiscoveryError, fetch_json
from poppy_tui.agent.config import Config
from poppy_tui.agent.signin.errors import SignInError
from poppy_tui.agent.signin.identity import ClientIdentity
from poppy_tui.agent.signin.vault import TokenVault, token_fingerprint
from poppy_tui.agent.store import CompanyRecord, Store
from poppy_tui.agent.store.sign_ins import (
    SignInRecord,
    delete_sign_in,
    get_sign_in,
    save_sign_in,
    update_scopes,
)
from poppy_tui.protocol.conventions import ACCESS_TOKEN_REFRESH_MARGIN_SECONDS
from poppy_tui.protocol.discovery import is_loopback_host
from poppy_tui.protocol.errors import ProtocolError

if TYPE_CHECKING:
    from poppy_tui.agent.signin.vault import AccessToken

    # The flows and the protocol's sign-in parsers load only when someone is, or gets, signed in:
    # a request to a Company with no sign-in asks access_token() and gets None from the store.
    from poppy_tui.agent.signin.flows import DeviceSignIn, DirectSignIn, Grant, MediatedSignIn
    from poppy_tui.protocol.signin import AuthOffer, AuthServer, SignInKind, TokenResponse

    Flow = DeviceSignIn | DirectSignIn | MediatedSignIn

log = logging.getLogger(__name__)
MAX_METADATA_BYTES = 256 * 1024


@dataclass(frozen=True)
class SignOutResult:
    was_signed_in: bool
    revoked: bool
    detail: str


class SignIns:
    def __init__(
        self,
        store: Store,
        config: Config,
        identity: Callable[[], ClientIdentity],
        http: Callable[[], Awaitable[httpx2.AsyncClient]],
        vault: TokenVault | None = None,
    ) -> None:
        self._store = store
        self._config = config
        self._identity = identity
        self._http = http
        self.vault = vault or TokenVault()
        self._servers: dict[str, AuthServer] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        # issuer -> the fingerprint of the token a refresh gave after the Company refused the one
        # before: refused too, the sign-in is over (no loop of refreshes).
        self._renewed_after_refusal: dict[str, str] = {}

    # ---- what a Company offers ------------------------------------------------------------------

    def _allow_loopback(self, company: CompanyRecord) -> bool:
        return self._config.allow_loopback and is_loopback_host(
            urlsplit(company.base_url).hostname or ""
        )

    def offer(self, company: CompanyRecord) -> AuthOffer:
        from poppy_tui.protocol.signin import parse_auth_offer

        try:
            return parse_auth_offer(company.document, self._allow_loopback(company))
        except ProtocolError as exc:
            raise SignInError(f"{company.name} offers no usable sign-in: {exc}") from None

    def default_kind(self, company: CompanyRecord) -> SignInKind:
        """Device first: a terminal can always show a code; then Direct, then Mediated."""
        from poppy_tui.protocol.signin import SIGN_IN_KINDS

        kinds = self.offer(company).kinds()
        if not kinds:
            raise SignInError(
                f"{possessive(company.name)} poppy.json offers no sign-in kind (auth.device, direct or mediated)"
            )
        return next(k for k in SIGN_IN_KINDS if k in kinds)

    async def bind_issuer(self, company: CompanyRecord) -> tuple[AuthOffer, AuthServer]:
        from poppy_tui.protocol.signin import metadata_url, parse_auth_server

        offer = self.offer(company)
        allow = self._allow_loopback(company)
        url = metadata_url(offer.issuer)
        try:
            _, document = await fetch_json(
                await self._http(), url, allow, MAX_METADATA_BYTES, "authorization server metadata"
            )
        except DiscoveryError as exc:
            raise SignInError(f"can't sign in to {company.name}: {exc}") from None
        try:
            server = parse_auth_server(document, offer.issuer, company.domain, allow)
        except ProtocolError as exc:
            raise SignInError(
                f"can't sign in to {company.name}: its authorization server at {url} fails issuer binding ({exc})"
            ) from None
        self._servers[offer.issuer] = server
        return offer, server

    # ---- starting a sign-in ---------------------------------------------------------------------

    def status(self, company: CompanyRecord) -> SignInRecord | None:
        return get_sign_in(self._store, company.id)

    def covers(self, company: CompanyRecord, scopes: tuple[str, ...] | list[str]) -> bool:
        """An existing grant already holds every scope asked (then no new sign-in is needed)."""
        record = self.status(company)
        return record is not None and set(scopes) <= set(record.scopes)

    def scopes_to_ask(
        self,
        company: CompanyRecord,
        needed: tuple[str, ...] | list[str] | None,
        allowed: tuple[str, ...] | None = None,
    ) -> tuple[str, ...]:
        """What a sign-in asks for: the scopes needed, plus those the current sign-in holds (a new
        grant replaces the old one, so asking only for what is missing would lose the rest: a
        sign-in for `bookings` must keep `poppy:read`). Held scopes this kind can't grant are left
        out (asking for them would be refused). Without `needed`: everything the kind offers."""
        if not needed:
            return tuple(allowed or ())
        record = self.status(company)
        held = record.scopes if record is not None else ()
        kept = [s for s in held if allowed is None or s in allowed]
        return tuple(dict.fromkeys([*kept, *needed]))

    async def begin(
        self,
        company: CompanyRecord,
        kind: SignInKind | None = None,
        scopes: tuple[str, ...] | list[str] | None = None,
        **options,
    ) -> Flow:
        from poppy_tui.agent.signin.flows import (
            DeviceSignIn,
            DirectSignIn,
            MediatedSignIn,
            SignInContext,
        )

        company = self._store.get_company(company.id)
        kind = kind or self.default_kind(company)
        offer, server = await self.bind_issuer(company)
        if kind not in offer.kinds():
            offered = ", ".join(offer.kinds()) or "none"
            raise SignInError(
                f"{company.name} does not offer {kind} sign-in (it offers: {offered})"
            )
        allowed = offer.scopes_for(kind)
        asked = self.scopes_to_ask(company, scopes, allowed)
        extra = [s for s in asked if s not in allowed]
        if extra:
            raise SignInError(
                f"{company.name} does not grant {' '.join(extra)} with {kind} sign-in "
                f"(it grants: {' '.join(allowed) or 'nothing'})"
            )
        if kind == "device" and server.device_authorization_endpoint is None:
            raise SignInError(
                f"{possessive(company.name)} authorization server has no device_authorization_endpoint"
            )
        if kind == "direct" and server.authorization_endpoint is None:
            raise SignInError(
                f"{possessive(company.name)} authorization server has no authorization_endpoint"
            )

        async def finish(
            kind_done: SignInKind, tokens: TokenResponse, account: str | None
        ) -> Grant:
            # The Company's own word on the account first (an ID token, userinfo, a JWT access
            # token), else the one the person typed (Mediated): agent/signin/account.py.
            from poppy_tui.agent.signin.account import learn_account

            said = await learn_account(server, tokens, self._identity().client_id, self._http)
            return self._keep(company, server, kind_done, tokens, said or account)

        context = SignInContext(
            company,
            offer,
            server,
            asked,
            self._identity(),
            self._config.request_timeout_seconds,
            self._allow_loopback(company),
            self._http,
            finish,
        )
        if kind == "device":
            return DeviceSignIn(context, **options)
        if kind == "direct":
            return DirectSignIn(context, **options)
        return MediatedSignIn(context)

    def _keep(
        self,
        company: CompanyRecord,
        server: AuthServer,
        kind: SignInKind,
        tokens: TokenResponse,
        account: str | None,
    ) -> Grant:
        # The refresh token first: a sign_ins row without its refresh token would claim a sign-in we can't renew.
        from poppy_tui.agent.signin.flows import Grant

        if tokens.refresh_token:
            self.vault.keep_refresh_token(server.issuer, tokens.refresh_token)
        else:
            self.vault.forget(server.issuer)
        record = save_sign_in(self._store, company.id, server.issuer, kind, tokens.scopes, account)
        self.vault.keep_access(
            server.issuer, tokens.access_token, tokens.expires_in, record.signed_in_at
        )
        self._renewed_after_refusal.pop(server.issuer, None)
        log.info(
            "signed in to company %s (%s), scopes %s", company.id, kind, " ".join(tokens.scopes)
        )
        return Grant(kind, record.scopes, record.account)

    # ---- the token a request carries -------------------------------------------------------------

    async def access_token(self, company: CompanyRecord) -> str | None:
        """`Agent.access_token_source`: the access token for this Company, or None when signed out."""
        record = self.status(company)
        if record is None:
            return None
        issuer = record.issuer
        if self._issuer_now(company) != issuer:
            # poppy.json names another issuer now: a new issuer signs every user out.
            self.vault.forget(issuer)
            delete_sign_in(self._store, company.id)
            log.info("sign-in to company %s ended: its issuer changed", company.id)
            return None
        cached = self._cached(record)
        if cached is not None and cached.fresh(ACCESS_TOKEN_REFRESH_MARGIN_SECONDS):
            return cached.token
        lock = self._locks.setdefault(issuer, asyncio.Lock())
        async with lock:
            cached = self._cached(record)
            if cached is not None and cached.fresh(ACCESS_TOKEN_REFRESH_MARGIN_SECONDS):
                return cached.token  # another task refreshed it meanwhile
            refreshed = await self._refresh(company, record)
            if refreshed is not None:
                return refreshed
            cached = self._cached(record)
            return cached.token if cached is not None and cached.usable() else None

    def _cached(self, record: SignInRecord) -> AccessToken | None:
        """The access token in memory, if it belongs to the sign-in the store holds now. One from
        an earlier sign-in (the person signed in again, maybe in another poppy-tui process) is
        dropped: the refresh token that sign-in kept gives this process the new one."""
        cached = self.vault.access(record.issuer)
        if (
            cached is not None
            and cached.signed_in_at is not None
            and cached.signed_in_at != record.signed_in_at
        ):
            self.vault.forget_access(record.issuer)
            return None
        return cached

    async def token_refused(self, company: CompanyRecord, fingerprint: str | None) -> None:
        """The Company answered a request carrying the token with this fingerprint with 401
        invalid_token (RFC 6750 3.1): it no longer takes it (revoked, or expired early). The token
        is dropped and renewed once with the refresh token; a sign-in that can't be renewed (no
        refresh token, the grant revoked), or whose renewed token is refused as well, is ended,
        so it is the person's to sign in again."""
        record = self.status(company)
        if record is None:
            return
        issuer = record.issuer
        if self._replaced(issuer, fingerprint):
            return
        lock = self._locks.setdefault(issuer, asyncio.Lock())
        async with lock:
            if self._replaced(issuer, fingerprint):
                return  # renewed while we waited for the lock (access_token refreshes under it)
            self.vault.forget_access(issuer)
            if fingerprint is not None and self._renewed_after_refusal.get(issuer) == fingerprint:
                self._end(company, issuer, "its renewed access token was refused too")
                return
            renewed = await self._refresh(company, record)
        if renewed is not None:
            self._renewed_after_refusal[issuer] = token_fingerprint(renewed)
        elif self.status(company) is not None and self.vault.access(issuer) is None:
            try:
                can_renew = self.vault.refresh_token(issuer) is not None
            except SignInError:
                can_renew = False
            if not can_renew:
                self._end(
                    company,
                    issuer,
                    "its access token was refused and there is nothing to renew it with",
                )

    def _replaced(self, issuer: str, refused: str | None) -> bool:
        """The token held now is not the refused one (a refresh, a new sign-in since the request
        left): the Company never saw it, so it is kept."""
        cached = self.vault.access(issuer)
        return (
            cached is not None
            and refused is not None
            and token_fingerprint(cached.token) != refused
        )

    def _end(self, company: CompanyRecord, issuer: str, why: str) -> None:
        try:
            self.vault.forget(issuer)
        except SignInError as exc:
            log.warning("the sign-in to company %s could not be forgotten: %s", company.id, exc)
        delete_sign_in(self._store, company.id)
        self._renewed_after_refusal.pop(issuer, None)
        log.info("sign-in to company %s ended: %s", company.id, why)

    def _issuer_now(self, company: CompanyRecord) -> str | None:
        from poppy_tui.protocol.signin import parse_auth_offer

        try:
            return parse_auth_offer(
                self._store.get_company(company.id).document, self._allow_loopback(company)
            ).issuer
        except (ProtocolError, KeyError):
            return None

    async def _refresh(self, company: CompanyRecord, record: SignInRecord) -> str | None:
        from poppy_tui.protocol.signin import parse_token_response

        try:
            refresh_token = self.vault.refresh_token(record.issuer)
        except SignInError as exc:
            log.warning("can't read the sign-in for company %s: %s", company.id, exc)
            return None
        if refresh_token is None:
            if self.vault.access(record.issuer) is None:
                delete_sign_in(self._store, company.id)  # nothing left to sign in with: signed out
            return None
        try:
            server = self._servers.get(record.issuer) or (await self.bind_issuer(company))[1]
        except SignInError as exc:
            log.warning("can't refresh the sign-in for company %s: %s", company.id, exc)
            return None
        from poppy_tui.agent.signin.oauth import OAuthError, oauth_client, within

        allow = self._allow_loopback(company)
        async with oauth_client(
            self._identity(), server.issuer, self._config.request_timeout_seconds, allow
        ) as client:
            try:
                token = await within(
                    client.refresh_token(server.token_endpoint, refresh_token=refresh_token),
                    self._config.request_timeout_seconds,
                )
            except OAuthError as exc:
                if exc.error == "invalid_grant" and self._rotated_elsewhere(
                    record.issuer, refresh_token
                ):
                    # Another poppy-tui process (the TUI beside a CLI run) refreshed first and
                    # the Company rotated the token: that is not a sign-out. Use theirs.
                    return await self._refresh(company, record)
                if exc.error in ("invalid_grant", "unauthorized_client", "invalid_client"):
                    # Revoked by the person or the Company: go on signed out (0.2 4.9), and don't
                    # sign in again unless the person asks.
                    self.vault.forget(record.issuer)
                    delete_sign_in(self._store, company.id)
                    log.info(
                        "sign-in to company %s ended by the Company (%s)", company.id, exc.error
                    )
                    return None
                log.warning("refresh for company %s failed: %s", company.id, exc.error)
                return None
            except Exception as exc:  # noqa: BLE001 - a failed refresh leaves the old token to expire
                log.warning("refresh for company %s failed: %s", company.id, type(exc).__name__)
                return None
        try:
            tokens = parse_token_response(dict(token), record.scopes)
        except ProtocolError as exc:
            log.warning("refresh for company %s gave an unusable answer: %s", company.id, exc.field)
            return None
        if tokens.refresh_token and tokens.refresh_token != refresh_token:
            self.vault.keep_refresh_token(
                record.issuer, tokens.refresh_token
            )  # rotated (RFC 6819 5.2.2.3)
        self.vault.keep_access(
            record.issuer, tokens.access_token, tokens.expires_in, record.signed_in_at
        )
        if tokens.scopes != record.scopes:
            update_scopes(self._store, company.id, tokens.scopes)
        return tokens.access_token

    def _rotated_elsewhere(self, issuer: str, used: str) -> bool:
        try:
            current = self.vault.refresh_token(issuer)
        except SignInError:
            return False
        return current is not None and current != used

    # ---- signing out -------------------------------------------------------------------------------

    async def sign_out(self, company: CompanyRecord) -> SignOutResult:
        record = self.status(company)
        if record is None:
            return SignOutResult(False, False, f"not signed in to {company.name}")
        issuer = record.issuer
        refresh_token = None
        try:
            refresh_token = self.vault.refresh_token(issuer)
        except SignInError:
            pass
        from poppy_tui.agent.signin.oauth import describe_failure, oauth_client, within

        revoked, detail = False, ""
        access = None if refresh_token else self.vault.access(issuer)
        token = refresh_token or (access.token if access else None)
        hint = "refresh_token" if refresh_token else "access_token"
        if token is None:
            detail = "no token was left to revoke"
        else:
            try:
                server = self._servers.get(issuer) or (await self.bind_issuer(company))[1]
                if server.revocation_endpoint is None:
                    detail = f"{possessive(company.name)} authorization server has no revocation_endpoint"
                else:
                    allow = self._allow_loopback(company)
                    async with oauth_client(
                        self._identity(), issuer, self._config.request_timeout_seconds, allow
                    ) as client:
                        response = await within(
                            client.revoke_token(
                                server.revocation_endpoint, token=token, token_type_hint=hint
                            ),
                            self._config.request_timeout_seconds,
                        )
                    revoked = response.status_code == 200
                    if not revoked:
                        detail = f"{possessive(company.name)} revocation endpoint answered HTTP {response.status_code}"
            except SignInError as exc:
                detail = str(exc)
            except Exception as exc:  # noqa: BLE001
                detail = str(
                    describe_failure(exc, f"{possessive(company.name)} revocation endpoint")
                )
        # Deleted here whatever the Company answered: the person asked to be signed out.
        self.vault.forget(issuer)
        delete_sign_in(self._store, company.id)
        return SignOutResult(True, revoked, detail)
