"""The demo authorization server, built from authlib's grants and endpoints.

- Direct Sign-In: authorization code with PKCE (S256 only, always required), `state`,
  and RFC 9207 `iss` in every redirect, errors included; `redirect_uri` must be one of
  the CIMD's `redirect_uris`, character for character.
- Device Sign-In: RFC 8628 (authorization_pending, slow_down, expired_token,
  access_denied); a device code gives tokens once.
- Refresh tokens rotate (authlib's RefreshTokenGrant, with a new refresh token each
  time); revocation is RFC 7009.
- Client authentication everywhere is private_key_jwt with `aud` equal to the issuer
  as one string, `jti` never reused, keys only from the agent's CIMD/JWKS.

authlib is synchronous; `routes.py` awaits the agent's CIMD and key first
(`AgentDirectory.prefetch`) and then calls in here.
"""

from __future__ import annotations

import threading
import time
from typing import Any
from collections.abc import Iterable

from authlib.oauth2.rfc6749 import AuthorizationServer, OAuth2Payload, OAuth2Request
from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6749.errors import (
    InvalidClientError,
    InvalidGrantError,
    InvalidRequestError,
    InvalidScopeError,
)
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7523 import JWTBearerClientAssertion
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc8628 import DeviceAuthorizationEndpoint, DeviceCodeGrant
from authlib.oauth2.rfc9207 import IssuerParameter
from joserfc import jwt as jose_jwt
from joserfc.errors import JoseError
from starlette.responses import JSONResponse, Response

from poppy_tui.demo.accounts.clients import PRIVATE_KEY_JWT, AgentDirectory, DemoClient
from poppy_tui.demo.accounts.tokens import (
    AUTHORIZATION_CODE_SECONDS,
    AuthorizationCode,
    DeviceCredential,
    TokenStore,
)
from poppy_tui.demo.accounts.users import (
    DEVICE_SCOPES,
    DIRECT_SCOPES,
    Account,
    Directory,
    parse_scope,
)

# Asymmetric algorithms only: `none` and HMAC can never verify an agent.
ASSERTION_ALGORITHMS = ["ES256", "ES384", "RS256", "PS256", "EdDSA"]
ASSERTION_MAX_LIFETIME_SECONDS = 300


class FormRequest(OAuth2Request):
    """An OAuth2Request over values already read from a Starlette request."""

    def __init__(
        self, method: str, uri: str, headers: Any, query: dict[str, str], form: dict[str, str]
    ) -> None:
        super().__init__(method, uri, headers=headers)
        self._query = query
        self._form = form
        self.payload = _Payload({**query, **form})

    @property
    def args(self) -> dict[str, str]:
        return self._query

    @property
    def form(self) -> dict[str, str]:
        return self._form


class _Payload(OAuth2Payload):
    def __init__(self, data: dict[str, str]) -> None:
        self._data = data
        self._datalist = {k: [v] for k, v in data.items()}

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> dict[str, list[str]]:
        return self._datalist


class LocatedResponse(Response):
    """A redirect whose Location authlib's RFC 9207 hook can rewrite (it sets `.location`)."""

    @property
    def location(self) -> str | None:
        return self.headers.get("location")

    @location.setter
    def location(self, value: str) -> None:
        self.headers["location"] = value


class PoppyClientAssertion(JWTBearerClientAssertion):
    """private_key_jwt as Poppy reads it: `aud` is auth.issuer as one string, and
    nothing else (not a list holding it, not the token endpoint URL)."""

    CLIENT_AUTH_METHOD = PRIVATE_KEY_JWT

    def __init__(self, issuer: str) -> None:
        super().__init__(validate_jti=True, leeway=60)
        self.issuer = issuer
        self._seen: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def get_audiences(self) -> list[str]:
        return [self.issuer]

    def resolve_client_public_key(self, client: DemoClient):
        if client.assertion_key is None:
            raise InvalidClientError(
                description="The client assertion names no key (kid) of the agent's JWKS."
            )
        return client.assertion_key

    def process_assertion_claims(self, assertion, resolve_key):
        try:
            token = jose_jwt.decode(assertion, resolve_key, algorithms=ASSERTION_ALGORITHMS)
        except (JoseError, ValueError) as exc:
            raise InvalidClientError(
                description=f"The client assertion was rejected: {exc}"
            ) from None
        self.verify_claims(token.claims)
        return token.claims

    def verify_claims(self, claims) -> None:
        aud = claims.get("aud")
        if not isinstance(aud, str) or aud != self.issuer:
            raise InvalidClientError(
                description=f"The client assertion's aud must be the issuer {self.issuer} as one string."
            )
        exp, iat = claims.get("exp"), claims.get("iat")
        if (
            isinstance(exp, (int, float))
            and isinstance(iat, (int, float))
            and exp - iat > ASSERTION_MAX_LIFETIME_SECONDS
        ):
            raise InvalidClientError(
                description="The client assertion lives longer than 5 minutes."
            )
        super().verify_claims(claims)

    def validate_jti(self, claims, jti) -> bool:
        now = time.time()
        key = (str(claims.get("sub")), str(jti))
        with self._lock:
            for old in [k for k, until in self._seen.items() if until < now]:
                del self._seen[old]
            if key in self._seen:
                return False
            self._seen[key] = float(claims.get("exp", now)) + self.leeway
            return True


class S256Only(CodeChallenge):
    """PKCE is required for every authorization request, and only with S256."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]
    DEFAULT_CODE_CHALLENGE_METHOD = "S256"

    def validate_code_challenge(self, grant, redirect_uri):
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("code_challenge is required (PKCE, S256).")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method must be S256.")
        return super().validate_code_challenge(grant, redirect_uri)

    def get_authorization_code_challenge(self, authorization_code: AuthorizationCode) -> str:
        return authorization_code.code_challenge

    def get_authorization_code_challenge_method(self, authorization_code: AuthorizationCode) -> str:
        return authorization_code.code_challenge_method


class DemoAuthorizationServer(AuthorizationServer):
    def __init__(
        self,
        issuer: str,
        verification_uri: str,
        agents: AgentDirectory,
        tokens: TokenStore,
        users: Directory,
        device_expires_in: int,
        device_interval: int,
    ) -> None:
        super().__init__(scopes_supported=list(dict.fromkeys(DIRECT_SCOPES + DEVICE_SCOPES)))
        self.issuer = issuer
        self.agents = agents
        self.tokens = tokens
        self.users = users
        self.register_client_auth_method(PRIVATE_KEY_JWT, PoppyClientAssertion(issuer))
        self.register_grant(_AuthorizationCodeGrant, [S256Only(required=True)])
        self.register_grant(_RefreshTokenGrant)
        self.register_grant(_DeviceCodeGrant)
        self.register_endpoint(_Revocation)
        device = _DeviceAuthorization(self)
        device.verification_uri = verification_uri
        device.EXPIRES_IN = device_expires_in
        device.INTERVAL = device_interval
        self.register_endpoint(device)
        self.register_token_generator("default", _token_stub)
        self.register_extension(_Issuer(issuer))

    # ----- what authlib asks of a framework -------------------------------------

    def query_client(self, client_id: str) -> DemoClient | None:
        return self.agents.query_client(client_id)

    def create_oauth2_request(self, request) -> OAuth2Request:
        return request  # routes.py builds FormRequest itself

    def handle_response(
        self, status: int, body: Any, headers: Iterable[tuple[str, str]]
    ) -> Response:
        header_map = dict(headers)
        if status == 401 and isinstance(body, dict):
            # authlib names Basic, which this server doesn't take: say what it does take.
            header_map["WWW-Authenticate"] = client_challenge(
                self.issuer, str(body.get("error_description") or "")
            )
        if isinstance(body, dict):
            header_map.pop("Content-Type", None)
            header_map.setdefault("Cache-Control", "no-store")
            return JSONResponse(body, status_code=status, headers=header_map)
        return LocatedResponse(body or b"", status_code=status, headers=header_map)

    def send_signal(self, name, *args, **kwargs) -> None:
        return None

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        """Make the real tokens for the stub authlib generated, in place (its dict is the response)."""
        scopes = parse_scope(token.get("scope"))
        refresh = getattr(request, "refresh_token", None)
        if refresh is not None:
            grant = refresh.grant
        else:
            account = request.user
            sign_in = (
                "device"
                if isinstance(getattr(request, "credential", None), DeviceCredential)
                else "direct"
            )
            grant = self.tokens.new_grant(
                request.client.get_client_id(), account.account_id, scopes, sign_in
            )
        token.clear()
        token.update(self.tokens.issue(grant, scopes))


def client_challenge(issuer: str, description: str) -> str:
    """The WWW-Authenticate a 401 from the token, revocation, device or mediated endpoint
    carries (RFC 9110 11.6.1: every 401 has one; RFC 6749 5.2). Clients authenticate with a
    private_key_jwt assertion in the body, which has no registered HTTP scheme: the challenge
    names the method and the issuer, so a client sees what to send, and where."""
    safe = "".join(ch for ch in description if 0x20 <= ord(ch) < 0x7F and ch not in '"\\')
    return f'{PRIVATE_KEY_JWT} realm="{issuer}", error="invalid_client", error_description="{safe}"'


def _token_stub(
    grant_type, client, user=None, scope=None, expires_in=None, include_refresh_token=True
) -> dict[str, Any]:
    return {"token_type": "Bearer", "scope": scope or ""}


class _Issuer(IssuerParameter):
    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    def get_issuer(self) -> str:
        return self.issuer


class _AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = [PRIVATE_KEY_JWT]

    @property
    def store(self) -> TokenStore:
        return self.server.tokens

    def validate_requested_scope(self) -> None:
        requested = parse_scope(self.request.payload.scope)
        unknown = [s for s in requested if s not in DIRECT_SCOPES]
        if unknown:
            raise InvalidScopeError(f"Direct Sign-In can't grant {' '.join(unknown)}.")

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = request.payload.data
        self.store.save_code(
            AuthorizationCode(
                code=code,
                client_id=request.client.get_client_id(),
                redirect_uri=request.payload.redirect_uri,
                scopes=parse_scope(request.scope),
                account_id=request.user.account_id,
                code_challenge=data["code_challenge"],
                code_challenge_method=data.get("code_challenge_method", "S256"),
                expires_at=time.time() + AUTHORIZATION_CODE_SECONDS,
            )
        )

    def query_authorization_code(self, code: str, client: DemoClient) -> AuthorizationCode | None:
        return self.store.take_code(code, client.get_client_id())

    def delete_authorization_code(self, authorization_code: AuthorizationCode) -> None:
        self.store.use_code(authorization_code)

    def authenticate_user(self, authorization_code: AuthorizationCode) -> Account | None:
        return self.server.users.get(authorization_code.account_id)


class _RefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = [PRIVATE_KEY_JWT]
    INCLUDE_NEW_REFRESH_TOKEN = True  # rotation

    def authenticate_refresh_token(self, refresh_token: str):
        return self.server.tokens.refresh_token(refresh_token)

    def authenticate_user(self, refresh_token) -> Account | None:
        return self.server.users.get(refresh_token.grant.account_id)

    def revoke_old_credential(self, refresh_token) -> None:
        self.server.tokens.rotate(refresh_token)


class _DeviceCodeGrant(DeviceCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = [PRIVATE_KEY_JWT]
    request_credential: DeviceCredential | None = None  # the credential being polled

    def query_device_credential(self, device_code: str) -> DeviceCredential | None:
        credential = self.server.tokens.device(device_code)
        if credential is None:
            # RFC 6749 5.2: a grant that is invalid, expired or used is `invalid_grant`, not
            # the malformed request authlib would call it (the request itself is well formed).
            raise InvalidGrantError("The device_code is unknown or was already used.")
        return credential

    def query_user_grant(self, user_code: str):
        credential = self.request_credential
        if credential is None or credential.decision is None:
            return None
        account_id, approved = credential.decision
        return self.server.users.get(account_id), approved

    def validate_device_credential(self, credential: DeviceCredential):
        self.request_credential = credential
        return super().validate_device_credential(credential)

    def should_slow_down(self, credential: DeviceCredential) -> bool:
        now = time.monotonic()
        previous, credential.last_poll = credential.last_poll, now
        if previous is not None and now - previous < credential.interval:
            credential.interval += 5  # RFC 8628 3.5: this and every later poll
            return True
        return False

    def create_token_response(self):
        result = super().create_token_response()
        self.request.credential.used = True  # a device code gives tokens once
        return result


class _Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = [PRIVATE_KEY_JWT]

    def query_token(self, token_string: str, token_type_hint: str | None):
        return self.server.tokens.any_token(token_string)

    def revoke_token(self, token, request) -> None:
        self.server.tokens.revoke_grant(token.grant)


class _DeviceAuthorization(DeviceAuthorizationEndpoint):
    CLIENT_AUTH_METHODS = [PRIVATE_KEY_JWT]
    USER_CODE_TYPE = "string"
    verification_uri = ""

    def get_verification_uri(self) -> str:
        return self.verification_uri

    def create_endpoint_response(self, request):
        requested = parse_scope(request.payload.scope)
        unknown = [s for s in requested if s not in DEVICE_SCOPES]
        if unknown:
            self.authenticate_client(request)
            raise InvalidScopeError(f"Device Sign-In can't grant {' '.join(unknown)}.")
        if not requested:
            request.payload.data["scope"] = " ".join(DEVICE_SCOPES)
        return super().create_endpoint_response(request)

    def save_device_credential(self, client_id: str, scope: str, data: dict[str, Any]) -> None:
        self.server.tokens.save_device(
            DeviceCredential(
                device_code=data["device_code"],
                user_code=data["user_code"],
                client_id=client_id,
                scopes=parse_scope(scope),
                expires_at=time.time() + data["expires_in"],
                interval=data["interval"],
            )
        )
