"""Sign-in (spec 5.4; 0.2 4.4 to 4.7): what a Company offers and what its authorization server
answers, checked before any of it is used. Pure: no I/O, so every rule here is easy to test.

Everything in here comes from a Company and is hostile until checked: URLs must be https (or
loopback for a loopback Company), names and messages are only ever shown sanitised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from poppy_tui.protocol.conventions import (
    ACCOUNT_ID_TOKEN_MEMBER,
    ACCOUNT_USERINFO_METADATA,
    AS_METADATA_WELL_KNOWN,
    MEDIATED_STATUSES,
)
from poppy_tui.protocol.discovery import check_url
from poppy_tui.protocol.errors import ProtocolError
from poppy_tui.protocol.header_values import is_bearer_token, is_refresh_token, token_problem

SignInKind = Literal["device", "direct", "mediated"]
SIGN_IN_KINDS: tuple[SignInKind, ...] = ("device", "direct", "mediated")
MAX_SCOPES = 64
MAX_SCOPE_LENGTH = 200
MAX_FIELDS = 16
MAX_EXPIRES_IN_SECONDS = 10 * 365 * 86400


class InvalidSignIn(ProtocolError):
    """What the Company offers or answered for sign-in can't be used."""

    code = "invalid_sign_in"


@dataclass(frozen=True)
class MediatedField:
    name: str
    label: str
    secret: bool  # as declared; safety/secret_fields.py decides what poppy-tui treats as secret
    type: str | None = (
        None  # an optional input type ("password", "email", ...), where a Company gives one
    )


@dataclass(frozen=True)
class MediatedOffer:
    endpoint: str
    fields: tuple[MediatedField, ...]
    scopes: tuple[str, ...]


@dataclass(frozen=True)
class AuthOffer:
    """poppy.json's `auth` block."""

    issuer: str
    direct_scopes: tuple[str, ...] | None
    device_scopes: tuple[str, ...] | None
    mediated: MediatedOffer | None
    custom_scopes: dict[str, str] = field(default_factory=dict)

    def kinds(self) -> tuple[SignInKind, ...]:
        offered: list[SignInKind] = []
        if self.device_scopes is not None:
            offered.append("device")
        if self.direct_scopes is not None:
            offered.append("direct")
        if self.mediated is not None:
            offered.append("mediated")
        return tuple(offered)

    def scopes_for(self, kind: SignInKind) -> tuple[str, ...]:
        if kind == "device":
            return self.device_scopes or ()
        if kind == "direct":
            return self.direct_scopes or ()
        return self.mediated.scopes if self.mediated else ()


@dataclass(frozen=True)
class AuthServer:
    """RFC 8414 metadata that passed issuer binding."""

    issuer: str
    token_endpoint: str
    revocation_endpoint: str | None
    authorization_endpoint: str | None
    device_authorization_endpoint: str | None
    poppy_domains: tuple[str, ...]
    # OIDC's userinfo endpoint, where the metadata names one: who the sign-in is (protocol/accounts.py).
    userinfo_endpoint: str | None = None


def _url(value: object, where: str, allow_loopback: bool) -> str:
    try:
        return check_url(value, where, allow_loopback)
    except ProtocolError as exc:
        raise InvalidSignIn(exc.field, exc.reason) from None


def _scopes(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > MAX_SCOPES:
        raise InvalidSignIn(where, f"must be an array of at most {MAX_SCOPES} scope names")
    scopes: list[str] = []
    for item in value:
        if not is_scope_token(item):
            raise InvalidSignIn(
                where, "holds a scope that is not a plain scope name (RFC 6749 3.3)"
            )
        if item not in scopes:
            scopes.append(item)
    return tuple(scopes)


def is_scope_token(value: object) -> bool:
    """RFC 6749 3.3 scope-token: printable ASCII except space, quote and backslash."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_SCOPE_LENGTH
        and all(0x21 <= ord(c) <= 0x7E and c not in '"\\' for c in value)
    )


def split_scope(value: object) -> tuple[str, ...]:
    """A space-separated `scope` string (token responses, challenges) as scope names."""
    if not isinstance(value, str):
        return ()
    return tuple(dict.fromkeys(s for s in value.split(" ") if is_scope_token(s)))


def parse_auth_offer(document: dict[str, Any], allow_loopback: bool) -> AuthOffer:
    auth = document.get("auth")
    if not isinstance(auth, dict):
        raise InvalidSignIn("auth", "is missing: this Company offers no sign-in")
    issuer = _url(auth.get("issuer"), "auth.issuer", allow_loopback)
    kinds: dict[str, tuple[str, ...] | None] = {}
    for kind in ("direct", "device"):
        block = auth.get(kind)
        if block is None:
            kinds[kind] = None
            continue
        if not isinstance(block, dict):
            raise InvalidSignIn(f"auth.{kind}", "must be an object")
        kinds[kind] = _scopes(block.get("scopes", []), f"auth.{kind}.scopes")
    mediated = None
    block = auth.get("mediated")
    if block is not None:
        if not isinstance(block, dict):
            raise InvalidSignIn("auth.mediated", "must be an object")
        endpoint = _url(block.get("endpoint"), "auth.mediated.endpoint", allow_loopback)
        raw_fields = block.get("fields")
        if not isinstance(raw_fields, list) or not raw_fields or len(raw_fields) > MAX_FIELDS:
            raise InvalidSignIn(
                "auth.mediated.fields", f"must be an array of 1 to {MAX_FIELDS} fields"
            )
        fields: list[MediatedField] = []
        for i, item in enumerate(raw_fields):
            where = f"auth.mediated.fields[{i}]"
            if not isinstance(item, dict):
                raise InvalidSignIn(where, "must be an object")
            name, label, secret = (
                item.get("name"),
                item.get("label", item.get("name")),
                item.get("secret", False),
            )
            if not isinstance(name, str) or not name or len(name) > 100 or not name.isprintable():
                raise InvalidSignIn(f"{where}.name", "must be a short printable string")
            if any(f.name == name for f in fields):
                raise InvalidSignIn(f"{where}.name", "is declared twice")
            if not isinstance(label, str) or len(label) > 200:
                raise InvalidSignIn(f"{where}.label", "must be a string of at most 200 characters")
            if not isinstance(secret, bool):
                raise InvalidSignIn(f"{where}.secret", "must be true or false")
            input_type = item.get("type")
            if input_type is not None and (
                not isinstance(input_type, str) or len(input_type) > 100
            ):
                raise InvalidSignIn(f"{where}.type", "must be a short string")
            fields.append(MediatedField(name, label or name, secret, input_type))
        mediated = MediatedOffer(
            endpoint, tuple(fields), _scopes(block.get("scopes", []), "auth.mediated.scopes")
        )
    custom = auth.get("custom_scopes", {})
    custom_scopes = (
        {k: v for k, v in custom.items() if is_scope_token(k) and isinstance(v, str)}
        if isinstance(custom, dict)
        else {}
    )
    return AuthOffer(issuer, kinds["direct"], kinds["device"], mediated, custom_scopes)


def metadata_url(issuer: str) -> str:
    """RFC 8414 3.1: the well-known segment goes between the host and the issuer's path."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/") if parts.path not in ("", "/") else ""
    return f"{parts.scheme}://{parts.netloc}{AS_METADATA_WELL_KNOWN}{path}"


def parse_auth_server(
    metadata: object, issuer: str, domain: str, allow_loopback: bool
) -> AuthServer:
    """Issuer binding (0.2 3.2): `issuer` equals auth.issuer character for character, and
    `poppy_domains` holds organization.domain. Every endpoint must be https (or loopback)."""
    if not isinstance(metadata, dict):
        raise InvalidSignIn("authorization server metadata", "must be a JSON object")
    if metadata.get("issuer") != issuer:
        got = metadata.get("issuer")
        shown = repr(got)[:120] if isinstance(got, str) else "missing"
        raise InvalidSignIn(
            "issuer",
            f"the authorization server says it is {shown}, not {issuer!r} as poppy.json's auth.issuer says",
        )
    domains = metadata.get("poppy_domains")
    if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
        raise InvalidSignIn("poppy_domains", "is missing from the authorization server metadata")
    if domain.lower() not in (d.lower() for d in domains):
        raise InvalidSignIn(
            "poppy_domains", f"does not list {domain!r}: this issuer does not speak for the Company"
        )

    def endpoint(name: str, required: bool = False) -> str | None:
        value = metadata.get(name)
        if value is None and not required:
            return None
        return _url(value, name, allow_loopback)

    return AuthServer(
        issuer=issuer,
        token_endpoint=endpoint("token_endpoint", required=True) or "",
        revocation_endpoint=endpoint("revocation_endpoint"),
        authorization_endpoint=endpoint("authorization_endpoint"),
        device_authorization_endpoint=endpoint("device_authorization_endpoint"),
        poppy_domains=tuple(d.lower() for d in domains),
        userinfo_endpoint=_optional_url(metadata.get(ACCOUNT_USERINFO_METADATA), allow_loopback),
    )


def _optional_url(value: object, allow_loopback: bool) -> str | None:
    """An endpoint nothing depends on: unusable is the same as absent, never a failed sign-in."""
    if value is None:
        return None
    try:
        return _url(value, ACCOUNT_USERINFO_METADATA, allow_loopback)
    except InvalidSignIn:
        return None


def link_host_allowed(url: str, issuer: str, poppy_domains: tuple[str, ...]) -> bool:
    """Device Sign-In: show a verification link only when its host, as the browser reads it, is the
    issuer's host, a poppy_domains entry, or a subdomain of either (0.2 4.6; web_address.own_link)."""
    return shown_link(url, issuer, poppy_domains) is not None


def shown_link(url: str, issuer: str, poppy_domains: tuple[str, ...]) -> str | None:
    """The link as the browser will load it (the form to show, encode and open), when it is the
    Company's own; else None."""
    from poppy_tui.protocol.web_address import own_link

    read = own_link(url, issuer, poppy_domains)
    return read.href if read is not None else None


@dataclass(frozen=True)
class DeviceAuthorization:
    device_code: str
    user_code: str
    verification_uri: str
    verification_uri_complete: str | None
    expires_in: int
    interval: int


def parse_device_authorization(body: object, default_interval: int) -> DeviceAuthorization:
    """RFC 8628 3.2."""
    if not isinstance(body, dict):
        raise InvalidSignIn("device authorization response", "must be a JSON object")

    def text(name: str, required: bool = True, limit: int = 2048) -> str | None:
        value = body.get(name)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value or len(value) > limit:
            raise InvalidSignIn(name, "is missing or not a short string")
        return value

    def number(name: str, default: int | None) -> int:
        value = body.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 86400:
            raise InvalidSignIn(name, "must be a whole number of seconds (1 to 86400)")
        return value

    return DeviceAuthorization(
        device_code=text("device_code") or "",
        user_code=text("user_code", limit=64) or "",
        verification_uri=text("verification_uri") or "",
        verification_uri_complete=text("verification_uri_complete", required=False),
        expires_in=number("expires_in", None),
        interval=number("interval", default_interval),
    )


@dataclass(frozen=True)
class Callback:
    code: str


def parse_callback(url: str, expected_state: str, issuer: str) -> Callback:
    """The Direct Sign-In redirect: `state` must be ours and `iss` (RFC 9207) exactly auth.issuer,
    checked before anything else in it is believed (an error too can be forged)."""
    try:
        query = parse_qs(urlsplit(url.strip()).query, keep_blank_values=True)
    except ValueError:
        raise InvalidSignIn("redirect", "is not a URL") from None

    def one(name: str) -> str | None:
        values = query.get(name)
        return values[0] if values and len(values) == 1 else None

    if one("state") != expected_state:
        raise InvalidSignIn("state", "does not match the sign-in poppy-tui started; refused")
    iss = one("iss")
    if iss != issuer:
        shown = "missing" if iss is None else repr(iss[:120])
        raise InvalidSignIn(
            "iss", f"is {shown}, not the Company's issuer {issuer!r}; refused (RFC 9207)"
        )
    error = one("error")
    if error is not None:
        description = one("error_description") or ""
        raise InvalidSignIn(
            "sign-in", f"the Company answered {error[:60]!r} {description[:200]}".rstrip()
        )
    code = one("code")
    if not code:
        raise InvalidSignIn("code", "is missing from the redirect")
    return Callback(code)


@dataclass(frozen=True)
class MediatedAnswer:
    status: str  # one of MEDIATED_STATUSES
    body: dict[str, Any]
    sign_in_id: str | None = None
    message: str = ""


def parse_mediated_answer(body: object) -> MediatedAnswer:
    if not isinstance(body, dict):
        raise InvalidSignIn("mediated sign-in answer", "must be a JSON object")
    status = body.get("status")
    if status not in MEDIATED_STATUSES:
        raise InvalidSignIn("status", f"must be one of {', '.join(MEDIATED_STATUSES)}")
    message = body.get("message") or body.get("error_description") or ""
    message = message if isinstance(message, str) else ""
    sign_in_id = None
    if status == "code_required":
        sign_in_id = body.get("sign_in_id")
        if (
            not isinstance(sign_in_id, str)
            or not sign_in_id
            or len(sign_in_id) > 256
            or not all(c.isalnum() or c in "-_" for c in sign_in_id)
        ):
            raise InvalidSignIn("sign_in_id", "must be 1 to 256 letters, digits, '-' or '_'")
    return MediatedAnswer(status, body, sign_in_id, message[:500])


@dataclass(frozen=True)
class TokenResponse:
    access_token: str
    expires_in: int | None
    refresh_token: str | None
    scopes: tuple[str, ...]
    # An OIDC ID token beside the tokens, where the Company gives one (protocol/accounts.py).
    id_token: str | None = None


def parse_token_response(body: object, asked: tuple[str, ...]) -> TokenResponse:
    """RFC 6749 5.1. A missing `scope` means what was asked was granted (RFC 6749 3.3)."""
    if not isinstance(body, dict):
        raise InvalidSignIn("token response", "must be a JSON object")
    access = body.get("access_token")
    if not isinstance(access, str) or not access:
        raise InvalidSignIn("access_token", "is missing from the token response")
    if not is_bearer_token(access):
        # It goes out in `Authorization: Bearer` (RFC 6750 2.1): a line break would split the
        # request, a non-ASCII character can't be sent at all.
        raise InvalidSignIn("access_token", token_problem(access))
    token_type = body.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise InvalidSignIn("token_type", "must be Bearer")
    expires_in = body.get("expires_in")
    if expires_in is not None and (
        isinstance(expires_in, bool) or not isinstance(expires_in, int) or expires_in < 0
    ):
        raise InvalidSignIn("expires_in", "must be a whole number of seconds")
    if expires_in is not None:
        expires_in = min(
            expires_in, MAX_EXPIRES_IN_SECONDS
        )  # a 400-digit lifetime is "very long", not a crash
    refresh = body.get("refresh_token")
    if refresh is not None and (not isinstance(refresh, str) or not refresh):
        raise InvalidSignIn("refresh_token", "must be a string")
    if refresh is not None and not is_refresh_token(refresh):
        raise InvalidSignIn("refresh_token", token_problem(refresh))
    scopes = split_scope(body["scope"]) if "scope" in body else asked
    id_token = body.get(ACCOUNT_ID_TOKEN_MEMBER)
    return TokenResponse(
        access, expires_in, refresh, scopes, id_token if isinstance(id_token, str) else None
    )
