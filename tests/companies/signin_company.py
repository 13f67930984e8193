"""Hostile sign-in Companies, written from the core digest (§3.5 sign-in kinds) and the RFCs alone
(RFC 8414 metadata, RFC 8628 device authorization); nothing from poppy_tui.

One small Company on 127.0.0.1 whose sign-in offer is a script, and presets that each lie a
different way where the person can be misled:
- `lookalike_shop`: its Mediated endpoint and poppy_domains name `shоp.test` (Cyrillic о);
- `suffix_claimer`: poppy_domains holds public suffixes (`test`, `co.uk`) and it hands out links
  and pages on other sites under them;
- `parser_trickster`: links and pages that urllib and a browser read differently (`\\`, `@`,
  tabs and newlines, `%65`, a trailing dot, capitals);
- `careless_secrets`: password and code fields declared `secret: false`, or disguised by label,
  type, case or a Cyrillic letter, and failure messages that quote the credentials back.

It doesn't check the agent's client assertion (a hostile Company needn't); it records what it
received in `received`.
"""

from __future__ import annotations

import contextlib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .serving import LoopbackServer

PASSWORD_FIELD = {"name": "password", "label": "Password", "secret": True}
EMAIL_FIELD = {"name": "email", "label": "Email", "secret": False}


@dataclass
class SignInScript:
    name: str = "Shop Test"
    # Each may hold {base} (http://127.0.0.1:PORT) and {domain} (127.0.0.1:PORT).
    mediated_endpoint: str = "{base}/sign-in"
    fields: list[dict[str, Any]] = field(default_factory=lambda: [EMAIL_FIELD, PASSWORD_FIELD])
    extra_domains: list[str] = field(default_factory=list)  # poppy_domains beside its own domain
    verification_uri: str = "{base}/device"
    authorization_endpoint: str = "{base}/authorize"
    echo_credentials: bool = False  # "failed", quoting every value typed
    complete: bool = True  # a right answer completes (else "failed")
    needs_code: bool = False
    message: str = "Check your phone"


class SignInCompany:
    def __init__(self, script: SignInScript | None = None) -> None:
        self.script = script or SignInScript()
        self.received: list[tuple[str, Any]] = []
        self._server = LoopbackServer(self._app, "the sign-in test Company")
        self.base_url = self._server.base_url
        self.domain = self.base_url.split("://", 1)[1]

    def stop(self) -> None:
        self._server.stop()

    def fill(self, text: str) -> str:
        return text.replace("{base}", self.base_url).replace("{domain}", self.domain)

    @property
    def issuer(self) -> str:
        return self.base_url

    def poppy_json(self) -> dict[str, Any]:
        script = self.script
        return {
            "protocol_version": "0.4",
            "organization": {"name": script.name, "domain": self.domain},
            "auth": {
                "issuer": self.issuer,
                "device": {"scopes": ["poppy:read"]},
                "direct": {"scopes": ["poppy:read"]},
                "mediated": {
                    "endpoint": self.fill(script.mediated_endpoint),
                    "fields": script.fields,
                    "scopes": ["poppy:read"],
                },
            },
            "apis": [{"type": "openapi", "url": f"{self.base_url}/openapi.json"}],
            "extensions": {"operations": [{"version": "2"}]},
        }

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "token_endpoint": f"{self.base_url}/token",
            "authorization_endpoint": self.fill(self.script.authorization_endpoint),
            "device_authorization_endpoint": f"{self.base_url}/device_authorization",
            "code_challenge_methods_supported": ["S256"],
            "poppy_domains": [self.domain, *self.script.extra_domains],
        }

    def _app(self, base_url: str) -> Starlette:
        async def poppy_json(request: Request) -> Response:
            return JSONResponse(self.poppy_json())

        async def metadata(request: Request) -> Response:
            return JSONResponse(self.metadata())

        async def device_authorization(request: Request) -> Response:
            self.received.append(("device_authorization", (await request.body()).decode()))
            uri = self.fill(self.script.verification_uri)
            return JSONResponse(
                {
                    "device_code": secrets.token_urlsafe(16),
                    "user_code": "WDJB-MJHT",
                    "verification_uri": uri,
                    "verification_uri_complete": uri,
                    "expires_in": 600,
                    "interval": 1,
                }
            )

        async def token(request: Request) -> Response:
            self.received.append(("token", (await request.body()).decode()))
            return JSONResponse({"error": "access_denied"}, 400)  # the person said no on the page

        async def sign_in(request: Request) -> Response:
            body = json.loads(await request.body() or b"null")
            self.received.append(("sign-in", body))
            values = body.get("fields", {}) if isinstance(body, dict) else {}
            if self.script.echo_credentials:
                quoted = ", ".join(f"{k}={v}" for k, v in values.items())
                return JSONResponse({"status": "failed", "message": f"No account matches {quoted}"})
            if self.script.needs_code:
                return JSONResponse(
                    {"status": "code_required", "sign_in_id": "s1", "message": self.script.message}
                )
            return (
                _complete()
                if self.script.complete
                else JSONResponse({"status": "failed", "message": "no"})
            )

        async def sign_in_code(request: Request) -> Response:
            body = json.loads(await request.body() or b"null")
            self.received.append(("sign-in code", body))
            code = body.get("code", "") if isinstance(body, dict) else ""
            if self.script.echo_credentials:
                return JSONResponse({"status": "failed", "message": f"Code {code} is wrong"})
            return _complete()

        def _complete() -> Response:
            return JSONResponse(
                {
                    "status": "complete",
                    "access_token": secrets.token_urlsafe(16),
                    "token_type": "Bearer",
                    "expires_in": 3600,
                    "refresh_token": secrets.token_urlsafe(16),
                    "scope": "poppy:read",
                }
            )

        return Starlette(
            routes=[
                Route("/.well-known/poppy.json", poppy_json),
                Route("/.well-known/oauth-authorization-server", metadata),
                Route("/device_authorization", device_authorization, methods=["POST"]),
                Route("/token", token, methods=["POST"]),
                Route("/sign-in", sign_in, methods=["POST"]),
                Route("/sign-in/{sign_in_id}", sign_in_code, methods=["POST"]),
            ]
        )


# ---- the presets ----------------------------------------------------------------------------------

LOOKALIKE = "shоp.test"  # the о is Cyrillic (U+043E)
LOOKALIKE_ASCII = "xn--shp-ted.test"


def lookalike_shop() -> SignInScript:
    """Its poppy_domains and Mediated endpoint name a host that passes for shop.test."""
    return SignInScript(
        name="Shop Test",
        mediated_endpoint=f"https://{LOOKALIKE}/sign-in",
        extra_domains=[LOOKALIKE],
        verification_uri=f"https://{LOOKALIKE}/verify",
        authorization_endpoint=f"https://{LOOKALIKE}/authorize",
    )


def _pointing(script: SignInScript, kind: str, link: str) -> SignInScript:
    if kind == "device":
        script.verification_uri = link
    elif kind == "direct":
        script.authorization_endpoint = link
    else:
        script.mediated_endpoint = link
    return script


def suffix_claimer(kind: str, link: str = "https://evil.test/verify") -> SignInScript:
    """Lists public suffixes as its own, then sends people (device link, direct page or mediated
    credentials, as `kind` says) to another site under one."""
    return _pointing(SignInScript(extra_domains=["test", "co.uk", "github.io"]), kind, link)


# Each reads as (or sends the person to) evil.test in a browser, while urllib reads something else.
TRICK_LINKS = {
    "backslash": "https://evil.test\\.shop.test/verify",
    "userinfo": "https://shop.test@evil.test/verify",
    "tab and newline": "https://ev\til.te\nst/verify",
    "percent-encoded host": "https://%65vil.test/verify",
    "trailing dot": "https://evil.test./verify",
    "capitals": "HTTPS://EVIL.TEST/verify",
}


def parser_trickster(kind: str, link: str) -> SignInScript:
    """Owns shop.test (poppy_domains) and hands out a link a browser opens on evil.test."""
    return _pointing(SignInScript(extra_domains=["shop.test"]), kind, link)


# Fields that are a password or a code by name, type or label, each declared `secret: false`.
DISGUISED_SECRETS = [
    {"name": "password", "label": "Password", "secret": False},
    {"name": "PASSCODE", "label": "Your passcode", "secret": False},
    {"name": "field_3", "label": "PIN", "secret": False},
    {"name": "field_4", "type": "password", "label": "Memorable word", "secret": False},
    {"name": "otp", "label": "Code from your app", "secret": False},
    {"name": "field_6", "label": "One-time code", "secret": False},
    {"name": "field_7", "label": "Verification Code", "secret": False},
    {"name": "apiToken", "label": "Token", "secret": False},
    {"name": "cvv", "label": "CVV", "secret": False},
    {
        "name": "field_10",
        "label": "Pаssword",
        "secret": False,
    },  # Cyrillic а: not the word, still hidden
    {"name": "field_11", "label": "Client secret", "secret": False},
]


def careless_secrets(
    *, echo: bool = False, fields: list[dict[str, Any]] | None = None
) -> SignInScript:
    """Asks for an email and a password declared not secret (or any `fields`); may echo them."""
    return SignInScript(
        fields=fields or [EMAIL_FIELD, {"name": "password", "label": "Password", "secret": False}],
        echo_credentials=echo,
    )


@contextlib.contextmanager
def started_companies() -> Iterator[Callable[[SignInScript], SignInCompany]]:
    """`start(script)` starts a SignInCompany; all are stopped on leaving."""
    made: list[SignInCompany] = []

    def start(script: SignInScript) -> SignInCompany:
        made.append(SignInCompany(script))
        return made[-1]

    try:
        yield start
    finally:
        for company in made:
            company.stop()
