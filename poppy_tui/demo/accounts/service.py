"""`Accounts`: the demo Company's authorization server on loopback and what its
interfaces ask of it (the poppy.json `auth` block, token checks).

The issuer has a path (`{base}/auth`), so its RFC 8414 metadata lives at
`/.well-known/oauth-authorization-server/auth` (RFC 8414 3.1), as a real multi-tenant
provider's would, and an agent that appends the well-known suffix to the issuer fails.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from collections.abc import Mapping

from authlib.oauth2.rfc6749.errors import OAuth2Error
from joserfc import jws
from joserfc.errors import JoseError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from poppy_tui.demo.accounts import pages
from poppy_tui.demo.accounts.clients import PRIVATE_KEY_JWT, AgentDirectory, AgentKeys, UnknownAgent
from poppy_tui.demo.accounts.guard import Caller, authenticate
from poppy_tui.demo.accounts.mediated import FIELDS, MediatedError, MediatedSignIns
from poppy_tui.demo.accounts.oauth import (
    DemoAuthorizationServer,
    FormRequest,
    _Issuer,
    client_challenge,
)
from poppy_tui.demo.accounts.tokens import (
    DEFAULT_ACCESS_TOKEN_SECONDS,
    DEFAULT_REFRESH_REUSE_GRACE_SECONDS,
    TokenStore,
)
from poppy_tui.demo.accounts.users import (
    ALL_SCOPES,
    CUSTOM_SCOPES,
    DEVICE_SCOPES,
    DIRECT_SCOPES,
    MEDIATED_SCOPES,
    Directory,
    parse_scope,
)
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.session_jwt import VerifiedSession

ISSUER_PATH = "/auth"
MAX_FORM_BYTES = 16 * 1024


@dataclass
class AccountsOptions:
    """How `start_company(accounts=...)` sets up the authorization server."""

    # Where the agents' CIMDs and JWKS come from; None: the Company's own AgentRegistry,
    # the one that verifies Session JWTs (fetches each agent's CIMD and JWKS).
    registry: AgentKeys | None = None
    access_token_seconds: float = DEFAULT_ACCESS_TOKEN_SECONDS
    refresh_reuse_grace_seconds: float = DEFAULT_REFRESH_REUSE_GRACE_SECONDS
    device_interval: int = 5
    device_expires_in: int = 600
    mediated_expires_in: float = 300.0


class Accounts:
    def __init__(
        self, base_url: str, organization_domain: str, options: AccountsOptions, agents: AgentKeys
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.issuer = self.base_url + ISSUER_PATH
        self.domain = organization_domain
        self.options = options
        self.users = Directory()
        self.tokens = TokenStore(
            access_token_seconds=options.access_token_seconds,
            refresh_reuse_grace_seconds=options.refresh_reuse_grace_seconds,
        )
        self.agents = AgentDirectory(options.registry if options.registry is not None else agents)
        self.mediated = MediatedSignIns(expires_in=options.mediated_expires_in)
        self.server = DemoAuthorizationServer(
            self.issuer,
            self.url("/device/verify"),
            self.agents,
            self.tokens,
            self.users,
            device_expires_in=options.device_expires_in,
            device_interval=options.device_interval,
        )

    def url(self, path: str) -> str:
        return self.issuer + path

    @property
    def metadata_path(self) -> str:
        return c.AS_METADATA_WELL_KNOWN + ISSUER_PATH

    @property
    def metadata_url(self) -> str:
        return self.base_url + self.metadata_path

    # ----- documents -------------------------------------------------------------

    def auth_block(self) -> dict[str, Any]:
        """poppy.json `auth`."""
        return {
            "issuer": self.issuer,
            "direct": {"scopes": list(DIRECT_SCOPES)},
            "device": {"scopes": list(DEVICE_SCOPES)},
            "mediated": {
                "endpoint": self.url("/mediated"),
                "fields": [dict(f) for f in FIELDS],
                "scopes": list(MEDIATED_SCOPES),
            },
            "custom_scopes": dict(CUSTOM_SCOPES),
        }

    @property
    def mcp_resource_metadata_path(self) -> str:
        return "/.well-known/oauth-protected-resource/mcp"

    def mcp_resource_metadata(self) -> dict[str, Any]:
        """RFC 9728 protected resource metadata for the MCP server (0.2 spec 6)."""
        return {
            "resource": self.base_url + "/mcp",
            "authorization_servers": [self.issuer],
            "scopes_supported": list(ALL_SCOPES),
            "bearer_methods_supported": ["header"],
            "resource_name": "Manzanita Outfitters MCP server",
        }

    def metadata(self) -> dict[str, Any]:
        """RFC 8414 metadata, with Poppy's `poppy_domains`."""
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.url("/authorize"),
            "token_endpoint": self.url("/token"),
            "revocation_endpoint": self.url("/revoke"),
            "device_authorization_endpoint": self.url("/device"),
            "scopes_supported": list(ALL_SCOPES),
            "response_types_supported": ["code"],
            "grant_types_supported": [
                "authorization_code",
                "refresh_token",
                "urn:ietf:params:oauth:grant-type:device_code",
            ],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": [PRIVATE_KEY_JWT],
            "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
            "revocation_endpoint_auth_methods_supported": [PRIVATE_KEY_JWT],
            # RFC 8414 2: REQUIRED when private_key_jwt is among the revocation endpoint's methods.
            "revocation_endpoint_auth_signing_alg_values_supported": ["ES256"],
            "authorization_response_iss_parameter_supported": True,
            "poppy_domains": [self.domain],
        }

    # ----- token checks (the resource side) -----------------------------------------

    def authenticate(self, headers: Mapping[str, str], session: VerifiedSession) -> Caller:
        return authenticate(self.tokens, headers, session)

    # ----- HTTP ------------------------------------------------------------------

    def routes(self) -> list[Route]:
        p = ISSUER_PATH
        return [
            Route(self.metadata_path, self._metadata, methods=["GET"]),
            Route(self.mcp_resource_metadata_path, self._mcp_resource_metadata, methods=["GET"]),
            Route(p + "/token", self._token, methods=["POST"]),
            Route(p + "/revoke", self._revoke, methods=["POST"]),
            Route(p + "/device", self._device_authorization, methods=["POST"]),
            Route(p + "/authorize", self._authorize, methods=["GET", "POST"]),
            Route(p + "/device/verify", self._device_verify, methods=["GET", "POST"]),
            Route(p + "/mediated", self._mediated, methods=["POST"]),
            Route(p + "/mediated/{sign_in_id}", self._mediated_code, methods=["POST"]),
        ]

    async def _mcp_resource_metadata(self, request: Request) -> Response:
        return JSONResponse(self.mcp_resource_metadata(), headers={"Cache-Control": "max-age=60"})

    async def _metadata(self, request: Request) -> Response:
        return JSONResponse(self.metadata(), headers={"Cache-Control": "max-age=60"})

    async def _read(self, request: Request) -> FormRequest:
        form: dict[str, str] = {}
        if request.method == "POST":
            raw = await request.body()
            if len(raw) > MAX_FORM_BYTES:
                raise _Bad(413, "invalid_request", "The request is too large.")
            if (
                raw
                and request.headers.get("content-type", "").split(";")[0].strip()
                == "application/x-www-form-urlencoded"
            ):
                parsed = await request.form()
                form = {k: v for k, v in parsed.items() if isinstance(v, str)}
        return FormRequest(
            request.method, str(request.url), request.headers, dict(request.query_params), form
        )

    async def _prefetch_assertion(self, values: Mapping[str, Any]) -> None:
        """Fetch the CIMD and the key a client assertion names, before authlib checks it."""
        assertion = values.get("client_assertion")
        if (
            values.get("client_assertion_type") != c.CLIENT_ASSERTION_TYPE
            or not isinstance(assertion, str)
            or not assertion
        ):
            raise _Bad(
                401,
                "invalid_client",
                "Authenticate with private_key_jwt (client_assertion_type and client_assertion).",
            )
        try:
            compact = jws.extract_compact(assertion.encode())
            header, claims = compact.headers(), json.loads(compact.payload)
        except (JoseError, ValueError, TypeError):
            raise _Bad(401, "invalid_client", "The client assertion is not a JWT.") from None
        client_id = claims.get("sub") if isinstance(claims, dict) else None
        kid = header.get("kid")
        if not isinstance(client_id, str) or not client_id:
            raise _Bad(
                401, "invalid_client", "The client assertion has no sub (the agent's client_id)."
            )
        if not isinstance(kid, str) or not kid:
            raise _Bad(
                401,
                "invalid_client",
                "The client assertion must name its key (kid) in the agent's JWKS.",
            )
        try:
            await self.agents.prefetch(client_id, kid)
        except UnknownAgent as exc:
            raise _Bad(401, "invalid_client", str(exc)) from None

    async def _token(self, request: Request) -> Response:
        try:
            req = await self._read(request)
            await self._prefetch_assertion(req.form)
        except _Bad as bad:
            return bad.response(self.issuer)
        return self.server.create_token_response(req)

    async def _revoke(self, request: Request) -> Response:
        try:
            req = await self._read(request)
            await self._prefetch_assertion(req.form)
        except _Bad as bad:
            return bad.response(self.issuer)
        return self.server.create_endpoint_response("revocation", req)

    async def _device_authorization(self, request: Request) -> Response:
        try:
            req = await self._read(request)
            await self._prefetch_assertion(req.form)
        except _Bad as bad:
            return bad.response(self.issuer)
        return self.server.create_endpoint_response("device_authorization", req)

    # ----- Direct Sign-In: the sign-in and consent page --------------------------------

    async def _authorize(self, request: Request) -> Response:
        try:
            req = await self._read(request)
        except _Bad as bad:
            return pages.error_page(bad.description, bad.status)
        client_id = req.payload.client_id
        if not client_id:
            return pages.error_page("The sign-in link names no agent (client_id).")
        try:
            client = await self.agents.prefetch(client_id)
        except UnknownAgent as exc:
            return pages.error_page(str(exc))
        try:
            grant = self.server.get_consent_grant(req)
        except OAuth2Error as error:
            if error.redirect_uri:  # a listed redirect_uri: the agent hears of it, with iss
                response = self.server.handle_error_response(req, error)
                _Issuer(self.issuer).add_issuer_parameter(self.server, response)
                return response
            return pages.error_page(
                f"This sign-in link can't be used: {error.description or error.error}."
            )
        scopes = parse_scope(req.scope)
        params = {
            k: v
            for k, v in req.payload.data.items()
            if k not in ("username", "password", "decision")
        }
        if request.method == "GET":
            return pages.consent_page(
                client.name, client_id, scopes, params, self.url("/authorize")
            )
        decision = req.form.get("decision")
        if decision == "deny":
            return self.server.create_authorization_response(req, grant_user=None, grant=grant)
        account = self.users.check_password(
            req.form.get("username", ""), req.form.get("password", "")
        )
        if decision != "allow" or account is None:
            params["username"] = req.form.get("username", "")
            return pages.consent_page(
                client.name,
                client_id,
                scopes,
                params,
                self.url("/authorize"),
                "That email and password don't match an account.",
            )
        return self.server.create_authorization_response(req, grant_user=account, grant=grant)

    # ----- Device Sign-In: the verification page ----------------------------------------

    async def _device_verify(self, request: Request) -> Response:
        action = self.url("/device/verify")
        try:
            req = await self._read(request)
        except _Bad as bad:
            return pages.error_page(bad.description, bad.status)
        user_code = req.payload.data.get("user_code", "")
        credential = self.tokens.device_by_user_code(user_code) if user_code else None
        agent: tuple[str, str] | None = None
        scopes: tuple[str, ...] = ()
        if credential is not None:
            try:
                client = await self.agents.prefetch(credential.client_id)
                agent, scopes = (client.name, credential.client_id), credential.scopes
            except UnknownAgent as exc:
                return pages.error_page(str(exc))
        if request.method == "GET":  # opening the link shows the request; it approves nothing
            return pages.device_page(action, user_code, agent, scopes)
        if credential is None:
            return pages.device_page(
                action,
                user_code,
                error="That code is unknown or has expired. Check the code your agent shows.",
            )
        decision = req.form.get("decision")
        if decision == "deny":
            self.tokens.decide_device(credential, "", False)
            return pages.done_page("You denied the request. Nothing was shared with the agent.")
        account = self.users.check_password(
            req.form.get("username", ""), req.form.get("password", "")
        )
        if decision != "allow" or account is None:
            return pages.device_page(
                action,
                user_code,
                agent,
                scopes,
                error="That email and password don't match an account.",
            )
        self.tokens.decide_device(credential, account.account_id, True)
        return pages.done_page("You're signed in. Go back to your agent; it continues on its own.")

    # ----- Mediated Sign-In ----------------------------------------------------------------

    async def _mediated_client(self, request: Request) -> tuple[dict[str, Any], str]:
        raw = await request.body()
        if len(raw) > MAX_FORM_BYTES:
            raise MediatedError(
                413,
                {
                    "status": "failed",
                    "error": "invalid_request",
                    "error_description": "The request is too large.",
                },
            )
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise MediatedError(
                400,
                {
                    "status": "failed",
                    "error": "invalid_request",
                    "error_description": "The body must be a JSON object.",
                },
            )
        auth = {
            k: body[k]
            for k in ("client_id", "client_assertion_type", "client_assertion")
            if isinstance(body.get(k), str)
        }
        try:
            await self._prefetch_assertion(auth)
        except _Bad as bad:
            raise MediatedError(
                bad.status,
                {"status": "failed", "error": bad.code, "error_description": bad.description},
                self._challenge(bad.status, bad.description),
            ) from None
        req = FormRequest("POST", str(request.url), request.headers, {}, auth)
        try:
            client = self.server.authenticate_client(req, [PRIVATE_KEY_JWT], "mediated")
        except OAuth2Error as error:
            raise MediatedError(
                401,
                {
                    "status": "failed",
                    "error": error.error,
                    "error_description": error.description or "",
                },
                self._challenge(401, error.description or ""),
            ) from None
        if "client_id" in body and body["client_id"] != client.get_client_id():
            described = "client_id is not the agent the client assertion names."
            raise MediatedError(
                401,
                {"status": "failed", "error": "invalid_client", "error_description": described},
                self._challenge(401, described),
            )
        return body, client.get_client_id()

    def _challenge(self, status: int, description: str) -> dict[str, str]:
        return (
            {"WWW-Authenticate": client_challenge(self.issuer, description)}
            if status == 401
            else {}
        )

    def _complete(self, client_id: str, account_id: str, scopes: tuple[str, ...]) -> Response:
        grant = self.tokens.new_grant(client_id, account_id, scopes, "mediated")
        return JSONResponse(
            {"status": "complete", **self.tokens.issue(grant, scopes)},
            headers={"Cache-Control": "no-store"},
        )

    async def _mediated(self, request: Request) -> Response:
        try:
            body, client_id = await self._mediated_client(request)
            fields, scopes = self.mediated.check_request(body)
            self.mediated.check_rate(client_id, fields["username"])
        except MediatedError as exc:
            return JSONResponse(
                exc.body,
                status_code=exc.status,
                headers={**exc.headers, "Cache-Control": "no-store"},
            )
        account = self.users.check_password(fields["username"], fields["password"])
        if account is None:
            self.mediated.failed(client_id, fields["username"])
            return JSONResponse(
                {
                    "status": "failed",
                    "error_description": "That email and password don't match an account.",
                },
                headers={"Cache-Control": "no-store"},
            )
        if account.one_time_code:
            pending = self.mediated.start(client_id, account, scopes)
            return JSONResponse(
                {
                    "status": "code_required",
                    "sign_in_id": pending.sign_in_id,
                    "expires_in": int(self.mediated.expires_in),
                    "error_description": "Enter the one-time code we sent to the account's email.",
                },
                headers={"Cache-Control": "no-store"},
            )
        return self._complete(client_id, account.account_id, scopes)

    async def _mediated_code(self, request: Request) -> Response:
        try:
            body, client_id = await self._mediated_client(request)
        except MediatedError as exc:
            return JSONResponse(
                exc.body,
                status_code=exc.status,
                headers={**exc.headers, "Cache-Control": "no-store"},
            )
        pending = self.mediated.pending(request.path_params["sign_in_id"], client_id)
        code = body.get("code")
        if pending is None:
            return JSONResponse(
                {
                    "status": "failed",
                    "error": "invalid_request",
                    "error_description": "There is no such sign-in.",
                },
                status_code=404,
            )
        if not isinstance(code, str) or not code.strip():
            return JSONResponse(
                {
                    "status": "failed",
                    "error": "invalid_request",
                    "error_description": "code is required.",
                },
                status_code=400,
            )
        result = self.mediated.check_code(pending, code)
        if result == "complete":
            return self._complete(client_id, pending.account.account_id, pending.scopes)
        if result == "expired":
            return JSONResponse(
                {"status": "expired", "error_description": "The sign-in expired; start again."}
            )
        return JSONResponse(
            {
                "status": "failed",
                "error_description": "That code isn't right."
                if not pending.done
                else "Too many wrong codes; start again.",
            }
        )


class _Bad(Exception):
    def __init__(self, status: int, code: str, description: str) -> None:
        super().__init__(description)
        self.status, self.code, self.description = status, code, description

    def response(self, issuer: str) -> Response:
        headers = {"Cache-Control": "no-store"}
        if self.status == 401:
            headers["WWW-Authenticate"] = client_challenge(issuer, self.description)
        return JSONResponse(
            {"error": self.code, "error_description": self.description},
            status_code=self.status,
            headers=headers,
        )
