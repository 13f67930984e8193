"""The three sign-in kinds, each a small object the CLI and the TUI drive step by step.

- DeviceSignIn (RFC 8628): start() gets the code and link, wait() polls the token endpoint,
  honouring `authorization_pending` and `slow_down` (+5 s).
- DirectSignIn: authorization code with PKCE (S256) and `state`; the redirect reaches a loopback
  listener, or the person pastes it (complete(url)); `iss` (RFC 9207) must equal auth.issuer.
- MediatedSignIn: exactly the declared fields, sent once to auth.mediated.endpoint; after
  `code_required`, only the code goes to {endpoint}/{sign_in_id}.

Secrets pass through these objects and are never kept on them, logged or put in an error.
"""

from __future__ import annotations

import asyncio
import json
import webbrowser
from dataclasses import dataclass
from typing import Any
from collections.abc import Awaitable, Callable
from urllib.parse import quote

import httpx2

from poppy_tui.safety.secret_fields import GuardedField, guard_fields, redact
from poppy_tui.safety.web_host import ShownHost
from poppy_tui.safety.wording import possessive
from poppy_tui.agent import logfile
from poppy_tui.agent.net.http import HttpAnswer, request
from poppy_tui.agent.signin.errors import CodeRejected, SignInError
from poppy_tui.agent.signin.identity import ClientIdentity
from poppy_tui.agent.signin.loopback import LoopbackReceiver
from poppy_tui.agent.store import CompanyRecord
from poppy_tui.protocol.conventions import (
    CLIENT_ASSERTION_TYPE,
    DEVICE_CODE_GRANT_TYPE,
    DEVICE_DEFAULT_INTERVAL_SECONDS,
    DEVICE_SLOW_DOWN_SECONDS,
    MAX_SIGNIN_ANSWER_BYTES,
    MEDIATED_FIELDS_MEMBER,
)
from poppy_tui.protocol.signin import (
    AuthOffer,
    AuthServer,
    DeviceAuthorization,
    InvalidSignIn,
    SignInKind,
    TokenResponse,
    parse_callback,
    parse_device_authorization,
    parse_mediated_answer,
    parse_token_response,
    shown_link,
)


@dataclass(frozen=True)
class Grant:
    """A finished sign-in: what was granted (never the tokens themselves)."""

    kind: SignInKind
    scopes: tuple[str, ...]
    account: str | None


Finish = Callable[[SignInKind, TokenResponse, "str | None"], Awaitable[Grant]]


@dataclass
class SignInContext:
    company: CompanyRecord
    offer: AuthOffer
    server: AuthServer
    scopes: tuple[str, ...]
    identity: ClientIdentity
    timeout_seconds: float
    allow_loopback: bool
    http: Callable[[], Awaitable[httpx2.AsyncClient]]
    finish: Finish

    @property
    def scope(self) -> str:
        return " ".join(self.scopes)

    def oauth(self, redirect_uri: str | None = None):
        from poppy_tui.agent.signin.oauth import oauth_client

        return oauth_client(
            self.identity,
            self.server.issuer,
            self.timeout_seconds,
            self.allow_loopback,
            redirect_uri=redirect_uri,
            scope=self.scope,
        )


class _Flow:
    kind: SignInKind

    def __init__(self, context: SignInContext) -> None:
        self.context = context

    @property
    def company_name(self) -> str:
        return self.context.company.name

    @property
    def company_domain(self) -> str:
        return self.context.company.domain

    @property
    def scopes(self) -> tuple[str, ...]:
        return self.context.scopes

    async def _finish(self, body: Any, account: str | None = None) -> Grant:
        try:
            tokens = parse_token_response(body, self.context.scopes)
        except InvalidSignIn as exc:
            raise SignInError(
                f"{possessive(self.company_name)} token answer can't be used: {exc}"
            ) from None
        return await self.context.finish(self.kind, tokens, account)

    async def aclose(self) -> None:
        pass


def shown_host_of(url: str | None) -> ShownHost | None:
    from poppy_tui.protocol.web_address import read_like_a_browser
    from poppy_tui.safety.web_host import show_host

    read = read_like_a_browser(url)
    return show_host(read.netloc) if read is not None else None


def where_it_leads(url: str) -> str:
    """Where a browser would take `url`, for a message (the look-alike mark included)."""
    shown = shown_host_of(url)
    return shown.line if shown is not None else "an address a browser can't open"


# ---- Device Sign-In (RFC 8628) ------------------------------------------------------------------


class DeviceSignIn(_Flow):
    kind: SignInKind = "device"

    def __init__(
        self, context: SignInContext, sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    ) -> None:
        super().__init__(context)
        self._sleep = sleep
        self.authorization: DeviceAuthorization | None = None
        self.interval = DEVICE_DEFAULT_INTERVAL_SECONDS

    async def start(self) -> DeviceAuthorization:
        endpoint = self.context.server.device_authorization_endpoint
        if endpoint is None:
            raise SignInError(
                f"{possessive(self.company_name)} authorization server has no device_authorization_endpoint"
            )
        from poppy_tui.agent.signin.oauth import describe_failure, within

        async with self.context.oauth() as client:
            try:
                response = await within(
                    client.request(
                        "POST",
                        endpoint,
                        data={"scope": self.context.scope},
                        auth=client.client_auth("private_key_jwt"),
                        withhold_token=True,
                    ),
                    self.context.timeout_seconds,
                )
                body = response.json() if response.content else None
            except Exception as exc:  # noqa: BLE001 - every failure becomes one line
                raise describe_failure(
                    exc, f"{possessive(self.company_name)} device authorization endpoint"
                ) from None
        if response.status_code != 200:
            error = body.get("error") if isinstance(body, dict) else None
            raise SignInError(
                f"{possessive(self.company_name)} device authorization endpoint answered HTTP {response.status_code}"
                + (f" ({error})" if isinstance(error, str) else "")
            )
        try:
            self.authorization = parse_device_authorization(body, DEVICE_DEFAULT_INTERVAL_SECONDS)
        except InvalidSignIn as exc:
            raise SignInError(
                f"{possessive(self.company_name)} device authorization answer can't be used: {exc}"
            ) from None
        self.interval = self.authorization.interval
        return self.authorization

    @property
    def link(self) -> str | None:
        """The link to show, as the browser will load it (WHATWG URL), or None when its host, read
        that way, is neither the issuer's, a poppy_domains entry, nor a subdomain of either (then
        only the code is shown, with where it came from)."""
        auth = self.authorization
        if auth is None:
            return None
        for candidate in (auth.verification_uri_complete, auth.verification_uri):
            shown = (
                shown_link(candidate, self.context.server.issuer, self.context.server.poppy_domains)
                if candidate
                else None
            )
            if shown is not None:
                return shown
        return None

    @property
    def link_host(self) -> ShownHost | None:
        """The link's host as shown beside it, marked when it is a look-alike."""
        return shown_host_of(self.link)

    @property
    def user_code(self) -> str:
        return self.authorization.user_code if self.authorization else ""

    async def wait(self) -> Grant:
        auth = self.authorization
        if auth is None:
            raise SignInError("the device sign-in was not started")
        from poppy_tui.agent.signin.oauth import OAuthError, describe_failure, within

        loop = asyncio.get_running_loop()
        deadline = loop.time() + auth.expires_in
        waited = 0.0
        async with self.context.oauth() as client:
            while True:
                if waited >= auth.expires_in or loop.time() >= deadline:
                    raise SignInError(
                        f"the code for {self.company_name} expired before sign-in was confirmed; sign in again for a new code"
                    )
                await self._sleep(self.interval)
                waited += self.interval
                try:
                    token = await within(
                        client.fetch_token(
                            self.context.server.token_endpoint,
                            grant_type=DEVICE_CODE_GRANT_TYPE,
                            device_code=auth.device_code,
                        ),
                        self.context.timeout_seconds,
                    )
                except OAuthError as exc:
                    if exc.error == "authorization_pending":
                        continue
                    if exc.error == "slow_down":
                        self.interval += DEVICE_SLOW_DOWN_SECONDS
                        continue
                    if exc.error == "expired_token":
                        raise SignInError(
                            f"the code for {self.company_name} expired before sign-in was confirmed; sign in again for a new code"
                        ) from None
                    if exc.error == "access_denied":
                        raise SignInError(
                            f"sign-in to {self.company_name} was refused on its page"
                        ) from None
                    raise describe_failure(
                        exc, f"{possessive(self.company_name)} token endpoint"
                    ) from None
                except Exception as exc:  # noqa: BLE001
                    raise describe_failure(
                        exc, f"{possessive(self.company_name)} token endpoint"
                    ) from None
                return await self._finish(dict(token))


# ---- Direct Sign-In (authorization code + PKCE) -------------------------------------------------


class DirectSignIn(_Flow):
    kind: SignInKind = "direct"

    def __init__(
        self, context: SignInContext, open_browser: Callable[[str], Any] | None = None
    ) -> None:
        super().__init__(context)
        self._open_browser = open_browser if open_browser is not None else _open_in_browser
        self._receiver: LoopbackReceiver | None = None
        self._state: str | None = None
        self._verifier: str | None = None
        self._redirect_uri: str | None = None
        self._done = False
        self.authorize_url: str | None = None
        self.browser_opened = False

    async def start(self, open_browser: bool = True) -> str:
        from authlib.common.security import generate_token

        endpoint = self.context.server.authorization_endpoint
        if endpoint is None:
            raise SignInError(
                f"{possessive(self.company_name)} authorization server has no authorization_endpoint"
            )
        self._state = generate_token(32)
        self._verifier = generate_token(64)  # RFC 7636: 43 to 128 characters
        self._receiver = LoopbackReceiver(self._state)
        self._redirect_uri = await self._receiver.start()
        async with self.context.oauth(self._redirect_uri) as client:
            built, _ = client.create_authorization_url(
                endpoint, state=self._state, code_verifier=self._verifier
            )
        # The page the person's browser opens, read as the browser reads it, must be the Company's
        # own, as a Device Sign-In link must (0.2 4.6): else it is neither opened nor shown.
        url = shown_link(built, self.context.server.issuer, self.context.server.poppy_domains)
        if url is None:
            await self.aclose()
            raise SignInError(
                f"{possessive(self.company_name)} sign-in page is at {where_it_leads(built)}, outside its own domains "
                f"({self.company_domain}), so poppy-tui neither opens nor shows it"
            )
        self.authorize_url = url
        if open_browser:
            self.browser_opened = bool(await asyncio.to_thread(self._open_browser, url))
        return url

    async def wait(self) -> Grant:
        """Until the browser's redirect reaches the loopback listener."""
        if self._receiver is None:
            raise SignInError("the direct sign-in was not started")
        return await self.complete(await self._receiver.received())

    async def complete(self, redirect_url: str) -> Grant:
        """Finish with the redirect URL (from the listener, or pasted from the browser)."""
        if self._state is None or self._verifier is None:
            raise SignInError("the direct sign-in was not started")
        if self._done:
            raise SignInError("this sign-in has already been completed")
        try:
            callback = parse_callback(redirect_url, self._state, self.context.server.issuer)
        except InvalidSignIn as exc:
            raise SignInError(f"sign-in to {self.company_name} refused: {exc}") from None
        from poppy_tui.agent.signin.oauth import describe_failure, within

        self._done = True
        await self.aclose()
        async with self.context.oauth(self._redirect_uri) as client:
            try:
                token = await within(
                    client.fetch_token(
                        self.context.server.token_endpoint,
                        grant_type="authorization_code",
                        code=callback.code,
                        code_verifier=self._verifier,
                        redirect_uri=self._redirect_uri,
                    ),
                    self.context.timeout_seconds,
                )
            except Exception as exc:  # noqa: BLE001
                raise describe_failure(
                    exc, f"{possessive(self.company_name)} token endpoint"
                ) from None
        return await self._finish(dict(token))

    async def aclose(self) -> None:
        if self._receiver is not None:
            await self._receiver.aclose()


# Text browsers Python's webbrowser falls back on without a display: run in this terminal,
# they would take it over from the TUI or the prompt, so the link is only shown then.
_CONSOLE_BROWSERS = frozenset({"www-browser", "links", "elinks", "lynx", "w3m"})


def _open_in_browser(url: str) -> bool:
    try:
        browser = webbrowser.get()
        if getattr(browser, "name", "") in _CONSOLE_BROWSERS:
            return False
        return bool(browser.open(url, new=2))
    except webbrowser.Error:
        return False


# ---- Mediated Sign-In -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CodeRequired:
    sign_in_id: str
    message: str  # from the Company: show it sanitised


class MediatedSignIn(_Flow):
    kind: SignInKind = "mediated"

    def __init__(self, context: SignInContext) -> None:
        super().__init__(context)
        assert context.offer.mediated is not None
        self.endpoint = context.offer.mediated.endpoint
        # poppy-tui's own verdict on each field: secret by its words whatever `secret` says, and
        # the one field kept as the account (safety/secret_fields.py).
        self.fields: tuple[GuardedField, ...] = guard_fields(context.offer.mediated.fields)
        self._check_endpoint()
        self._sent = False
        self._code_step: CodeRequired | None = None
        # The account the person named with the credentials: kept for the code step's answer,
        # which completes the same sign-in (the code itself names no account).
        self._account: str | None = None

    def _check_endpoint(self) -> None:
        """The credentials go to the host the person is shown, and that host is the Company's: read
        as a browser reads it (WHATWG URL) it is the issuer's host, a poppy_domains entry or a
        subdomain of either, and the HTTP client reads the same host (a `\\` or `%65` that the two
        parsers read differently would send them elsewhere than shown)."""
        from poppy_tui.protocol.web_address import own_link

        server = self.context.server
        read = own_link(self.endpoint, server.issuer, server.poppy_domains)
        if read is None:
            raise SignInError(
                f"{possessive(self.company_name)} Mediated Sign-In endpoint is at {where_it_leads(self.endpoint)}, "
                f"outside its own domains ({self.company_domain}); poppy-tui won't ask for your credentials"
            )
        try:
            client_host = httpx2.URL(self.endpoint).raw_host.decode("ascii").lower().rstrip(".")
        except (httpx2.InvalidURL, UnicodeDecodeError):
            client_host = ""
        if client_host.strip("[]") != read.host.strip("[]"):
            raise SignInError(
                f"{possessive(self.company_name)} Mediated Sign-In endpoint reads as one host to a browser "
                f"({where_it_leads(self.endpoint)}) and another to an HTTP client; poppy-tui won't send credentials there"
            )
        self._endpoint_read = read

    @property
    def endpoint_host(self) -> str:
        """Where the credentials go (host[:port]), as the browser and DNS read it."""
        return self._endpoint_read.netloc

    @property
    def endpoint_shown(self) -> ShownHost:
        """Where the credentials go, to show the person before they type them: A-labels, and
        marked when the name mixes alphabets."""
        from poppy_tui.safety.web_host import show_host

        return show_host(self._endpoint_read.netloc)

    @property
    def overridden(self) -> tuple[GuardedField, ...]:
        """Fields the Company declared not secret that poppy-tui keeps secret all the same."""
        return tuple(f for f in self.fields if f.secret and not f.declared_secret)

    async def submit(self, values: dict[str, str]) -> Grant | CodeRequired:
        """Send the person's answers, once. `values` must hold exactly the declared fields."""
        declared = [f.name for f in self.fields]
        if set(values) != set(declared):
            raise SignInError(f"mediated sign-in takes exactly the fields {', '.join(declared)}")
        if not all(isinstance(values[name], str) and values[name] for name in declared):
            missing = [f.label for f in self.fields if not values.get(f.name)]
            raise SignInError(f"fill in {', '.join(missing)}")
        if self._sent:
            raise SignInError("the credentials were already sent once; start a new sign-in")
        self._sent = True
        body = {
            **self._client_authentication(),
            "scope": self.context.scope,
            MEDIATED_FIELDS_MEMBER: {name: values[name] for name in declared},
        }
        # Only the field that identifies the account is kept (shown as "signed in as"); never a secret.
        account = next((values[f.name] for f in self.fields if f.account and not f.secret), None)
        self._account = account
        secrets = [values[f.name] for f in self.fields if f.secret]
        for value in secrets:
            logfile.secret(value)  # never written to the log, whoever would quote it
        return await self._answer(await self._post(self.endpoint, body), account, secrets)

    async def submit_code(self, code: str) -> Grant | CodeRequired:
        """After code_required: the one-time code (and no credential) to {endpoint}/{sign_in_id}, with
        the agent's own client authentication, as every request to the endpoint carries."""
        step = self._code_step
        if step is None:
            raise SignInError("the Company did not ask for a code")
        if not code.strip():
            raise SignInError("enter the code")
        self._code_step = None
        url = f"{self.endpoint.rstrip('/')}/{quote(step.sign_in_id, safe='')}"
        body = {"code": code.strip(), **self._client_authentication()}
        logfile.secret(code.strip())
        return await self._answer(
            await self._post(url, body), self._account, [code.strip()], code_step=step
        )

    def _client_authentication(self) -> dict[str, str]:
        return {
            "client_id": self.context.identity.client_id,
            "client_assertion_type": CLIENT_ASSERTION_TYPE,
            "client_assertion": self.context.identity.client_assertion(self.context.server.issuer),
        }

    async def _post(self, url: str, body: dict[str, Any]) -> HttpAnswer:
        client = await self.context.http()
        answer = await request(
            client,
            "POST",
            url,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            content=json.dumps(body).encode(),
            limit=MAX_SIGNIN_ANSWER_BYTES,
        )
        if not isinstance(answer, HttpAnswer):
            raise SignInError(
                f"could not reach {possessive(self.company_name)} sign-in endpoint: {answer.detail}"
            )
        return answer

    async def _answer(
        self,
        answer: HttpAnswer,
        account: str | None,
        secrets: list[str],
        code_step: CodeRequired | None = None,
    ) -> Grant | CodeRequired:
        if answer.status in (301, 302, 303, 307, 308):
            raise SignInError(
                f"{possessive(self.company_name)} sign-in endpoint redirected; the credentials go nowhere else"
            )
        if answer.status >= 500 or answer.body is None:
            raise SignInError(
                f"{possessive(self.company_name)} sign-in endpoint answered HTTP {answer.status}"
            )
        try:
            parsed = parse_mediated_answer(answer.body)
        except InvalidSignIn as exc:
            raise SignInError(
                f"{possessive(self.company_name)} sign-in answer can't be used: {exc}"
            ) from None
        # A Company must never return credentials (0.2 4.7); one that quotes them back is not shown them.
        message = redact(parsed.message, secrets)
        if parsed.status == "complete":
            return await self._finish(parsed.body, account)
        if parsed.status == "code_required":
            assert parsed.sign_in_id is not None
            self._code_step = CodeRequired(parsed.sign_in_id, message)
            return self._code_step
        if parsed.status == "expired":
            raise SignInError(f"the sign-in at {self.company_name} expired; sign in again")
        reason = f": {message}" if message else ""
        if code_step is not None and answer.status < 400:
            # `failed` to a code with 2xx: the sign-in still stands (the core spec doesn't say it ends;
            # a Company that ends it answers 4xx, or `failed` again), so the person may retype the
            # code; the credentials are never sent twice (protocol-choices.md, "Mediated code step").
            self._code_step = code_step
            raise CodeRejected(f"{self.company_name} did not take that code{reason}")
        raise SignInError(f"{self.company_name} did not sign you in{reason}")
