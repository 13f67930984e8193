"""A Company with an authorization server, written from the RFCs and the digest alone.

Nothing here comes from poppy_tui.demo. It serves, on 127.0.0.1:
- /.well-known/poppy.json with an `auth` block offering Device, Direct and Mediated Sign-In;
- RFC 8414 metadata for an issuer *with a path* (/tenants/juniper), so the metadata lives at
  /.well-known/oauth-authorization-server/tenants/juniper (RFC 8414 3.1);
- RFC 8628 device authorization, an HTML authorize + consent page (RFC 6749 4.1, PKCE S256 only,
  RFC 9207 `iss` in the redirect), the token endpoint (code, device-code, refresh grants), RFC 7009
  revocation, and the mediated endpoint with a code step.
Every client call is authenticated with a private_key_jwt assertion checked as the digest says:
ES256 by the registered key, iss = sub = client_id, aud = the issuer exactly, short exp, single jti.

It also has one action that needs both sign-in and the person's approval (Ops 3, 4, 6): POST
/orders (the next one held before its token is checked with `hold_next_order`). Without an access token it answers 401 sign_in_required; with one it no longer accepts
(revoked, RFC 6750 3.1) 401 invalid_token; else 403 approval_required with an operation that
belongs to the account, performed once when the approval of one of its revisions comes back
with a valid token.

How it says which account signed in differs where OAuth lets it (`account_proof`): not at all
("none": opaque tokens, as RFC 6749 allows), an OpenID Connect ID token in the token answer
("id_token"), an OIDC userinfo endpoint named in its metadata ("userinfo"), or JWT access tokens
(RFC 9068, "jwt_access"). Device, Direct and Mediated Sign-In each take any of its users (`USER`
and `more_users`), and every grant remembers whose it is.

Tests script it through attributes (`device_script`, `redirect_iss`, `access_lifetime`, ...) and
read what it received in `received`.
"""

from __future__ import annotations

import contextlib
import hashlib
import base64
import html
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from tests.companies.hold import Hold
from tests.waiting import wait_until_blocking

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
USER = {"email": "ada@juniper.test", "password": "correct horse battery staple", "code": "424242"}


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Grant:
    client_id: str
    scopes: list[str]
    refresh_token: str
    revoked: bool = False
    account: str | None = None  # the email signed in with (mediated sign-in), where known


@dataclass
class SpecAuthCompany:
    name: str = "Juniper Outfitters"
    port: int = 0
    clients: dict[str, Any] = field(default_factory=dict)  # client_id -> public key
    received: list[Seen] = field(default_factory=list)
    # Scripting.
    device_script: list[str] = field(default_factory=list)  # errors to answer polls with, in order
    device_interval: int = 1
    device_expires_in: int = 600
    verification_host: str | None = None  # another host for the verification link
    metadata_issuer: str | None = None  # what the metadata claims (defaults to the real issuer)
    metadata_domains: list[str] | None = None
    redirect_iss: str | None = None  # the iss put in the redirect (defaults to the issuer)
    access_lifetime: int = 3600
    mediated_needs_code: bool = False
    more_users: dict[str, str] = field(
        default_factory=dict
    )  # other accounts for mediated sign-in: email -> password
    token_status: int | None = None
    token_answer: dict[str, Any] = field(
        default_factory=dict
    )  # members that replace a token answer's (hostile tokens)
    user_code: str | None = None  # a scripted (hostile) user code
    # Hostile answers, per endpoint ("device", "token", "refresh", "revoke"): a valid answer padded past any
    # sensible size, streamed without a Content-Length ("huge"), or a small gzip body that
    # inflates past it ("bomb"); or a valid answer trickled a byte at this pace.
    oversized: dict[str, str] = field(default_factory=dict)
    trickle: dict[str, float] = field(default_factory=dict)
    # State.
    grants: dict[str, Grant] = field(default_factory=dict)  # refresh token -> grant
    access_tokens: dict[str, tuple[str, float]] = field(
        default_factory=dict
    )  # token -> (refresh, exp)
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)
    mediated: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen_jti: set[str] = field(default_factory=set)
    revoked_tokens: list[tuple[str, str | None]] = field(default_factory=list)
    # The orders action: revisions handed out (revision -> expiry), times performed, its first answer.
    order_revisions: dict[str, float] = field(default_factory=dict)
    orders_performed: int = 0
    refuse_tokens: bool = False  # answer every access token at /orders with invalid_token
    order_answers: list[str] = field(
        default_factory=list
    )  # "sign_in_required", "invalid_token", ...
    # The account whose access token carried each approval to /orders (None: a sign-in that named none).
    approval_accounts: list[str | None] = field(default_factory=list)
    # How it says who signed in: "none", "id_token", "userinfo" or "jwt_access" (see above).
    account_proof: str = "none"
    # Where its metadata says userinfo is, when not its own /oauth/userinfo (a hostile host).
    userinfo_url: str | None = None
    # The key its ID tokens and JWT access tokens are signed with (nobody checks: they come
    # straight from its token endpoint).
    signing_key: Any = field(default_factory=lambda: _new_signing_key())
    # Holds the next /orders request before its token is checked, until the test releases it
    # (tests/companies/hold.py): what the agent does meanwhile races the answer.
    hold_next_order: Hold | None = None

    def users(self) -> dict[str, str]:
        """email -> password, every account that can sign in."""
        return {USER["email"]: USER["password"], **self.more_users}

    def revoke_everything(self) -> None:
        """The Company ends every sign-in on its side (the person revoked the agent, say)."""
        for grant in self.grants.values():
            grant.revoked = True
        self.access_tokens.clear()

    # ---- addresses ----------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def domain(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def issuer(self) -> str:
        return f"{self.base_url}/tenants/juniper"

    def poppy_json(self) -> dict[str, Any]:
        return {
            "protocol_version": "0.4",
            "organization": {"name": self.name, "domain": self.domain},
            "auth": {
                "issuer": self.issuer,
                "device": {"scopes": ["poppy:read", "poppy:write"]},
                "direct": {"scopes": ["poppy:read", "poppy:write", "orders"]},
                "mediated": {
                    "endpoint": f"{self.base_url}/poppy/sign-in",
                    "fields": [
                        {"name": "email", "label": "Email", "secret": False},
                        {"name": "password", "label": "Password", "secret": True},
                    ],
                    "scopes": ["poppy:read"],
                },
                "custom_scopes": {"orders": "Place and change orders"},
            },
            "apis": [
                {"type": "openapi", "url": f"{self.base_url}/openapi.json", "description": "Orders"}
            ],
            "extensions": {"operations": [{"version": "2"}]},
        }

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.metadata_issuer if self.metadata_issuer is not None else self.issuer,
            "token_endpoint": f"{self.base_url}/oauth/token",
            "revocation_endpoint": f"{self.base_url}/oauth/revoke",
            "authorization_endpoint": f"{self.base_url}/oauth/authorize",
            "device_authorization_endpoint": f"{self.base_url}/oauth/device",
            "code_challenge_methods_supported": ["S256"],
            **(
                {"userinfo_endpoint": self.userinfo_url or f"{self.base_url}/oauth/userinfo"}
                if self.account_proof == "userinfo"
                else {}
            ),
            "poppy_domains": self.metadata_domains
            if self.metadata_domains is not None
            else [self.domain],
        }

    # ---- client authentication ------------------------------------------------------------------------

    def _client(self, form: dict[str, str]) -> str | None:
        """The client_id a valid private_key_jwt assertion proves, else None."""
        if form.get("client_assertion_type") != ASSERTION_TYPE:
            return None
        assertion = form.get("client_assertion", "")
        try:
            header = jwt.get_unverified_header(assertion)
            unverified = jwt.decode(assertion, options={"verify_signature": False})
        except jwt.PyJWTError:
            return None
        client_id = unverified.get("iss")
        key = self.clients.get(client_id)
        if key is None or header.get("alg") != "ES256" or "jwk" in header or "jku" in header:
            return None
        try:
            claims = jwt.decode(
                assertion,
                key,
                algorithms=["ES256"],
                audience=self.issuer,
                options={"require": ["exp", "iat", "jti"]},
            )
        except jwt.PyJWTError:
            return None
        if claims.get("sub") != client_id or form.get("client_id", client_id) != client_id:
            return None
        if claims["exp"] - claims["iat"] > 300 or claims["jti"] in self.seen_jti:
            return None
        self.seen_jti.add(claims["jti"])
        return client_id

    # ---- the app --------------------------------------------------------------------------------------

    def app(self) -> Starlette:
        async def record(request: Request) -> bytes:
            body = await request.body()
            self.received.append(
                Seen(request.method, request.url.path, dict(request.headers), body)
            )
            return body

        async def form_of(request: Request) -> dict[str, str]:
            body = await record(request)
            return {k: v[0] for k, v in parse_qs(body.decode(), keep_blank_values=True).items()}

        def error(code: str, status: int = 400, description: str | None = None) -> JSONResponse:
            body = {"error": code}
            if description:
                body["error_description"] = description
            return JSONResponse(body, status, headers={"Cache-Control": "no-store"})

        def hostile(endpoint: str, answer: dict[str, Any], status: int = 200) -> Response | None:
            """The answer as scripted for this endpoint: oversized, inflating or trickled; or None."""
            import asyncio
            import gzip
            import json as json_module

            if endpoint in self.trickle:
                pace, body = self.trickle[endpoint], json_module.dumps(answer).encode()

                async def trickled():
                    for _ in range(60):  # whitespace first: valid JSON, never finished in time
                        await asyncio.sleep(pace)
                        yield b" "
                    yield body

                return StreamingResponse(trickled(), status, media_type="application/json")
            kind = self.oversized.get(endpoint)
            if kind is None:
                return None
            padded = json_module.dumps({**answer, "padding": "x" * (2 * 1024 * 1024)}).encode()
            if kind == "bomb":
                return Response(
                    gzip.compress(padded),
                    status,
                    media_type="application/json",
                    headers={"Content-Encoding": "gzip"},
                )

            async def chunks():
                for start in range(0, len(padded), 16 * 1024):
                    yield padded[start : start + 16 * 1024]

            return StreamingResponse(chunks(), status, media_type="application/json")

        def issue(
            client_id: str,
            scopes: list[str],
            refresh: str | None = None,
            account: str | None = None,
        ) -> JSONResponse:
            refresh = refresh or secrets.token_urlsafe(24)
            self.grants[refresh] = Grant(client_id, scopes, refresh, account=account)
            now = int(time.time())
            access = secrets.token_urlsafe(24)
            if self.account_proof == "jwt_access" and account is not None:
                access = jwt.encode(
                    {
                        "iss": self.issuer,
                        "sub": subject_of(account),
                        "aud": self.base_url,
                        "client_id": client_id,
                        "iat": now,
                        "exp": now + self.access_lifetime,
                        "jti": secrets.token_urlsafe(8),
                    },
                    self.signing_key,
                    algorithm="ES256",
                    headers={"typ": "at+jwt"},
                )
            self.access_tokens[access] = (refresh, time.time() + self.access_lifetime)
            extra: dict[str, Any] = {}
            if self.account_proof == "id_token" and account is not None:
                extra["id_token"] = jwt.encode(
                    {
                        "iss": self.issuer,
                        "sub": subject_of(account),
                        "aud": client_id,
                        "email": account,
                        "email_verified": True,
                        "iat": now,
                        "exp": now + 600,
                    },
                    self.signing_key,
                    algorithm="ES256",
                )
            return JSONResponse(
                {
                    "access_token": access,
                    "token_type": "Bearer",
                    "expires_in": self.access_lifetime,
                    "refresh_token": refresh,
                    "scope": " ".join(scopes),
                    **extra,
                    **self.token_answer,
                },
                headers={"Cache-Control": "no-store"},
            )

        async def poppy_json(request: Request) -> Response:
            await record(request)
            return JSONResponse(self.poppy_json())

        async def metadata(request: Request) -> Response:
            await record(request)
            return JSONResponse(self.metadata())

        async def device(request: Request) -> Response:
            form = await form_of(request)
            client_id = self._client(form)
            if client_id is None:
                return error("invalid_client", 401)
            device_code = secrets.token_urlsafe(24)
            user_code = (
                self.user_code or f"{secrets.randbelow(10**4):04d}-{secrets.randbelow(10**4):04d}"
            )
            self.devices[device_code] = {
                "client_id": client_id,
                "user_code": user_code,
                "scopes": form.get("scope", "").split(),
                "approved": False,
                "denied": False,
                "expires": time.time() + self.device_expires_in,
            }
            host = self.verification_host or self.base_url
            answer = {
                "device_code": device_code,
                "user_code": user_code,
                "verification_uri": f"{host}/device",
                "verification_uri_complete": f"{host}/device?user_code={user_code}",
                "expires_in": self.device_expires_in,
                "interval": self.device_interval,
            }
            return hostile("device", answer) or JSONResponse(answer)

        async def device_page(request: Request) -> Response:
            """RFC 8628 5.4: opening the link only shows a form; approving takes a POST."""
            if request.method == "GET":
                await record(request)
                code = html.escape(request.query_params.get("user_code", ""))
                return HTMLResponse(
                    f"<form method=post><input name=user_code value='{code}'><input name=email>"
                    "<input name=password type=password><button name=decision value=allow>Allow</button></form>"
                )
            form = await form_of(request)
            entry = next(
                (d for d in self.devices.values() if d["user_code"] == form.get("user_code")), None
            )
            if entry is None or self.users().get(form.get("email", "")) != form.get("password"):
                return HTMLResponse("no", 400)
            entry["approved" if form.get("decision") == "allow" else "denied"] = True
            entry["account"] = form["email"]
            return HTMLResponse("You can go back to your agent.")

        async def authorize(request: Request) -> Response:
            if request.method == "GET":
                await record(request)
                q = dict(request.query_params)
            else:
                q = await form_of(request)
            redirect = q.get("redirect_uri", "")
            parts = urlsplit(redirect)
            # RFC 8252 7.3: a loopback redirect matches the registered one whatever its port.
            if q.get("client_id") not in self.clients or not (
                parts.scheme == "http"
                and parts.hostname == "127.0.0.1"
                and parts.path == "/callback"
            ):
                return HTMLResponse("unknown client or redirect_uri", 400)
            if (
                q.get("response_type") != "code"
                or q.get("code_challenge_method") != "S256"
                or not q.get("code_challenge")
            ):
                return HTMLResponse("PKCE S256 is required", 400)
            if not q.get("state"):
                return HTMLResponse("state is required", 400)
            if request.method == "GET":
                hidden = "".join(
                    f"<input type=hidden name='{html.escape(k)}' value='{html.escape(v)}'>"
                    for k, v in q.items()
                )
                return HTMLResponse(
                    f"<h1>{html.escape(self.name)}</h1><p>Allow the agent {html.escape(q['client_id'])} "
                    f"({html.escape(q.get('scope', ''))})?</p><form method=post action=/oauth/authorize>{hidden}"
                    "<input name=email><input name=password type=password>"
                    "<button name=decision value=allow>Allow</button></form>"
                )
            iss = self.redirect_iss if self.redirect_iss is not None else self.issuer
            if (
                self.users().get(q.get("email", "")) != q.get("password")
                or q.get("decision") != "allow"
            ):
                target = f"{redirect}?{urlencode({'error': 'access_denied', 'state': q['state'], 'iss': iss})}"
                return RedirectResponse(target, 302)
            code = secrets.token_urlsafe(24)
            self.codes[code] = {
                "client_id": q["client_id"],
                "redirect_uri": redirect,
                "challenge": q["code_challenge"],
                "scopes": q.get("scope", "").split(),
                "expires": time.time() + 60,
                "account": q["email"],
            }
            return RedirectResponse(
                f"{redirect}?{urlencode({'code': code, 'state': q['state'], 'iss': iss})}", 302
            )

        async def token(request: Request) -> Response:
            form = await form_of(request)
            if self.token_status is not None:
                return Response("upstream trouble", self.token_status, media_type="text/plain")
            scripted = hostile("token", {"error": "authorization_pending"}, 400)
            if scripted is not None:
                return scripted
            client_id = self._client(form)
            if client_id is None:
                return error("invalid_client", 401)
            grant_type = form.get("grant_type")
            if grant_type == "authorization_code":
                entry = self.codes.pop(form.get("code", ""), None)
                verifier = form.get("code_verifier", "")
                challenge = (
                    base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
                    .rstrip(b"=")
                    .decode()
                )
                if (
                    entry is None
                    or entry["client_id"] != client_id
                    or entry["redirect_uri"] != form.get("redirect_uri")
                    or entry["challenge"] != challenge
                    or entry["expires"] < time.time()
                ):
                    return error("invalid_grant")
                return issue(client_id, entry["scopes"], account=entry["account"])
            if grant_type == DEVICE_GRANT:
                entry = self.devices.get(form.get("device_code", ""))
                if entry is None or entry["client_id"] != client_id:
                    return error("invalid_grant")
                if self.device_script:
                    return error(self.device_script.pop(0))
                if entry["denied"]:
                    return error("access_denied")
                if entry["expires"] < time.time():
                    return error("expired_token")
                if not entry["approved"]:
                    return error("authorization_pending")
                del self.devices[form["device_code"]]
                return issue(client_id, entry["scopes"], account=entry.get("account"))
            if grant_type == "refresh_token":
                grant = self.grants.get(form.get("refresh_token", ""))
                if grant is None or grant.revoked or grant.client_id != client_id:
                    return error("invalid_grant")
                grant.revoked = True  # rotation: each refresh token works once
                issued = issue(client_id, grant.scopes, account=grant.account)
                import json as json_module

                return hostile("refresh", json_module.loads(issued.body)) or issued
            return error("unsupported_grant_type")

        async def revoke(request: Request) -> Response:
            form = await form_of(request)
            if self._client(form) is None:
                return error("invalid_client", 401)
            scripted = hostile("revoke", {})
            if scripted is not None:
                return scripted
            value = form.get("token", "")
            self.revoked_tokens.append((value, form.get("token_type_hint")))
            grant = self.grants.get(value)
            if grant is not None:
                grant.revoked = True
                for access, (refresh, _) in list(self.access_tokens.items()):
                    if refresh == value:
                        del self.access_tokens[access]
            return Response(status_code=200)

        async def mediated(request: Request) -> Response:
            import json

            body = json.loads(await record(request) or b"null")
            if not isinstance(body, dict) or self._client(body) is None:
                return error("invalid_client", 401)
            fields = body.get("fields")
            if not isinstance(fields, dict) or set(fields) != {"email", "password"}:
                return JSONResponse(
                    {"status": "failed", "error_description": "exactly email and password"}, 400
                )
            if self.users().get(str(fields.get("email"))) != fields.get("password"):
                return JSONResponse(
                    {"status": "failed", "error_description": "wrong email or password"}
                )
            scopes = str(body.get("scope", "")).split()
            if self.mediated_needs_code:
                sign_in_id = secrets.token_urlsafe(12).replace("-", "x")
                self.mediated[sign_in_id] = {
                    "client_id": body.get("client_id"),
                    "scopes": scopes,
                    "account": str(fields["email"]),
                }
                return JSONResponse(
                    {
                        "status": "code_required",
                        "sign_in_id": sign_in_id,
                        "message": "Enter the code we sent",
                    }
                )
            response = issue(body["client_id"], scopes, account=str(fields["email"]))
            return JSONResponse({"status": "complete", **json.loads(response.body)})

        async def mediated_code(request: Request) -> Response:
            import json

            body = json.loads(await record(request) or b"null")
            if not isinstance(body, dict) or self._client(body) is None:
                return error("invalid_client", 401)
            entry = self.mediated.pop(request.path_params["sign_in_id"], None)
            if entry is None:
                return JSONResponse({"status": "expired"})
            if body.get("code") != USER["code"]:
                return JSONResponse({"status": "failed", "error_description": "wrong code"})
            response = issue(entry["client_id"], entry["scopes"], account=entry["account"])
            return JSONResponse({"status": "complete", **json.loads(response.body)})

        async def place_order(request: Request) -> Response:
            await record(request)
            hold, self.hold_next_order = self.hold_next_order, None
            if hold is not None:
                await hold()
            authorization = request.headers.get("authorization", "")
            if not authorization.startswith("Bearer "):
                self.order_answers.append("sign_in_required")
                return JSONResponse(
                    {"error": "sign_in_required", "error_description": "Sign in to order"},
                    401,
                    headers={
                        "WWW-Authenticate": 'Bearer error="sign_in_required", error_description="Sign in to order"'
                    },
                )
            if self.refuse_tokens or not self.valid_access(authorization[len("Bearer ") :]):
                self.order_answers.append("invalid_token")
                return JSONResponse(
                    {"error": "invalid_token"},
                    401,
                    headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
                )
            approval = request.headers.get("poppy-approval", "")
            import http_sfv

            named = None
            if approval:
                parsed = http_sfv.Dictionary()
                parsed.parse(approval.encode("ascii"))
                named = (str(parsed["operation_id"].value), str(parsed["revision"].value))
                self.approval_accounts.append(
                    self.grants[self.access_tokens[authorization[len("Bearer ") :]][0]].account
                )
            if (
                named is not None
                and named[0] == "ord_juniper_1"
                and self.order_revisions.get(named[1], 0) > time.time()
            ):
                if self.orders_performed == 0:
                    self.orders_performed = 1  # at most once (Ops 7): a resend gets the same answer
                self.order_answers.append("performed")
                return JSONResponse({"order": "ord_juniper_1", "status": "placed"})
            revision = f"r{len(self.order_revisions) + 1}"
            expires = time.time() + 600
            self.order_revisions[revision] = expires
            self.order_answers.append("approval_required")
            return JSONResponse(
                {
                    "error": "approval_required",
                    "operation": {
                        "operation_id": "ord_juniper_1",
                        "revision": revision,
                        "summary": "Order **one rain jacket** for 80.00 USD, charged to your card on file.",
                        "expires_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires)),
                    },
                },
                403,
            )

        async def userinfo(request: Request) -> Response:
            """OIDC Core 5.3: who the bearer of this access token is."""
            await record(request)
            authorization = request.headers.get("authorization", "")
            token = authorization[len("Bearer ") :] if authorization.startswith("Bearer ") else ""
            if self.account_proof != "userinfo" or not self.valid_access(token):
                return JSONResponse({"error": "invalid_token"}, 401)
            account = self.grants[self.access_tokens[token][0]].account
            if account is None:
                return JSONResponse({"error": "invalid_token"}, 401)
            return JSONResponse({"sub": subject_of(account), "email": account})

        async def callback_sink(
            request: Request,
        ) -> Response:  # not used by the agent; keeps 404s honest
            return Response(status_code=404)

        return Starlette(
            routes=[
                Route("/.well-known/poppy.json", poppy_json),
                Route("/.well-known/oauth-authorization-server/tenants/juniper", metadata),
                Route("/oauth/device", device, methods=["POST"]),
                Route("/device", device_page, methods=["GET", "POST"]),
                Route("/oauth/authorize", authorize, methods=["GET", "POST"]),
                Route("/oauth/token", token, methods=["POST"]),
                Route("/oauth/revoke", revoke, methods=["POST"]),
                Route("/poppy/sign-in", mediated, methods=["POST"]),
                Route("/poppy/sign-in/{sign_in_id}", mediated_code, methods=["POST"]),
                Route("/orders", place_order, methods=["POST"]),
                Route("/oauth/userinfo", userinfo),
                Route("/{path:path}", callback_sink),
            ]
        )

    # ---- helpers for tests ---------------------------------------------------------------------------

    def approve_device_form(self, user_code: str, email: str | None = None) -> dict[str, str]:
        """The device page's form as the person fills it in: USER's, or another account's."""
        who = email or USER["email"]
        return {
            "user_code": user_code,
            "email": who,
            "password": self.users()[who],
            "decision": "allow",
        }

    def valid_access(self, token: str) -> bool:
        entry = self.access_tokens.get(token)
        return entry is not None and entry[1] > time.time() and not self.grants[entry[0]].revoked


def _new_signing_key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def subject_of(email: str) -> str:
    """The stable, opaque `sub` this Company gives an account."""
    return "usr_" + hashlib.sha256(email.encode()).hexdigest()[:16]


class Served:
    """A SpecAuthCompany served by uvicorn in a thread on a free loopback port."""

    def __init__(self, company: SpecAuthCompany) -> None:
        import uvicorn

        self.company = company
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        company.port = sock.getsockname()[1]

        class _Server(uvicorn.Server):
            def capture_signals(self):  # pytest owns signals
                return contextlib.nullcontext()

        config = uvicorn.Config(
            company.app(),
            log_config=None,
            log_level="critical",
            access_log=False,
            lifespan="off",
            http="h11",
            loop="asyncio",
            ws="none",
            timeout_graceful_shutdown=1,
        )
        self._server = _Server(config)

        def run() -> None:
            try:
                self._server.run(sockets=[sock])
            finally:
                sock.close()

        self._thread = threading.Thread(target=run, daemon=True, name=f"spec-auth-{company.port}")
        self._thread.start()
        wait_until_blocking(
            lambda: self._server.started or not self._thread.is_alive(),
            timeout=15,
            step=0.01,
            describe="the spec authorization server starting",
        )
        if not self._server.started:
            raise RuntimeError("the spec authorization server did not start")

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
