"""poppy.json (spec 3): what a Company offers, validated before we use any of it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any
from collections.abc import Mapping
from ipaddress import ip_address
from urllib.parse import SplitResult, urlsplit

# is_loopback_host is imported from here too (agent/companies.py, agent/signin/service.py).
from poppy_tui.protocol.addresses import is_loopback_host as is_loopback_host
from poppy_tui.protocol.addresses import literal_problem
from poppy_tui.protocol.conventions import (
    CONVERSATION_PROTOCOL_TYPE,
    DISCOVERY_DEFAULT_FRESH_SECONDS,
    DISCOVERY_MAX_FRESH_SECONDS,
    DISCOVERY_MIN_FRESH_SECONDS,
    SUPPORTED_DOCUMENT_VERSIONS,
    WELL_KNOWN_PATH,
)
from poppy_tui.protocol.errors import InvalidDiscovery
from poppy_tui.protocol.extensions import document_supports_operations

MAX_NAME_LENGTH = 200


@dataclass(frozen=True)
class ApiEntry:
    type: str  # "openapi" or "mcp"
    url: str
    description: str = ""


@dataclass(frozen=True)
class CompanyDocument:
    protocol_version: str
    name: str
    domain: str
    issuer: str | None
    apis: tuple[ApiEntry, ...]
    conversation_endpoints: tuple[str, ...]
    supports_operations: bool
    raw: dict[str, Any] = field(compare=False, repr=False, default_factory=dict)

    @property
    def openapi_url(self) -> str | None:
        return next((a.url for a in self.apis if a.type == "openapi"), None)

    @property
    def mcp_url(self) -> str | None:
        return next((a.url for a in self.apis if a.type == "mcp"), None)

    @property
    def conversation_endpoint(self) -> str | None:
        return self.conversation_endpoints[0] if self.conversation_endpoints else None

    @property
    def audience(self) -> str:
        """Who Session JWTs are addressed to: the issuer, or the domain's origin without one."""
        return self.issuer or f"https://{self.domain}"


# A host as a person types it: DNS labels of ASCII letters, digits and inner hyphens, or of any
# printable non-ASCII characters (an IDN, judged by IDNA and the look-alike checks later), or an IP
# literal. Anything else (spaces, underscores, a stray ":") is a typo, refused before the resolver
# ever sees it.
_LABEL = re.compile(r"(?!-)([A-Za-z0-9-]|[^\x00-\x7f])+(?<!-)")


def host_problem(hostname: str) -> str | None:
    """Why `hostname` (as urlsplit gives it, brackets removed) can't be a host, or None."""
    if ":" in hostname:  # an IPv6 literal; literal_problem judges the address itself
        try:
            ip_address(hostname.split("%", 1)[0])
        except ValueError:
            return f"{hostname!r} is not an IPv6 address"
        return None
    labels = hostname.removesuffix(".").split(".")
    if any(
        len(label) > 63 or not _LABEL.fullmatch(label) or not label.isprintable()
        for label in labels
    ):
        return f"{hostname!r} is not a host name"
    return None


def _port_problem(parts: SplitResult) -> str | None:
    try:
        port = parts.port  # raises for a port that isn't a number from 0 to 65535
    except ValueError:
        port = 0
    return "the port must be a number from 1 to 65535" if port == 0 else None


def _host_of(served_host: str) -> str:
    try:
        return urlsplit(f"//{served_host}").hostname or served_host
    except ValueError:
        return served_host


def check_url(url: object, where: str, allow_loopback_http: bool) -> str:
    """HTTPS only; plain http only to loopback and only when explicitly allowed."""
    if not isinstance(url, str) or not url:
        raise InvalidDiscovery(where, "must be a non-empty URL string")
    try:
        parts = urlsplit(url)
        hostname = parts.hostname
    except ValueError as exc:
        raise InvalidDiscovery(where, f"is not a valid URL ({exc})") from None
    if not hostname:
        raise InvalidDiscovery(where, f"has no host: {url!r}")
    if parts.username or parts.password:
        raise InvalidDiscovery(where, "must not carry credentials")
    bad_host = host_problem(hostname) or _port_problem(parts)
    if bad_host:
        raise InvalidDiscovery(where, f"can't be used: {bad_host}")
    refused = literal_problem(hostname, allow_loopback=True)  # loopback: the scheme rules below
    if refused:
        raise InvalidDiscovery(where, f"can't be used: {refused}")
    if parts.scheme == "https":
        if is_loopback_host(hostname) and not allow_loopback_http:
            raise InvalidDiscovery(
                where, "points at a loopback address, allowed only for local Companies"
            )
        return url
    if parts.scheme == "http" and allow_loopback_http and is_loopback_host(hostname):
        return url
    raise InvalidDiscovery(where, f"must be an https URL, got {parts.scheme or 'no'} scheme")


def discovery_url(domain_or_url: str, allow_loopback_http: bool = False) -> str:
    """Where to fetch poppy.json for a domain (https) or a base URL (loopback http allowed)."""
    text = domain_or_url.strip()
    if not text or any(ch.isspace() for ch in text):
        raise InvalidDiscovery("company", "is not a domain or URL (it is empty or has spaces)")
    missing_colon = re.match(r"(?i)(https?)//", text)
    if missing_colon:  # "http//host": read as a host named "http", which the resolver would look up
        fixed = f"{missing_colon.group(1).lower()}://{text[missing_colon.end() :]}"
        raise InvalidDiscovery("company", f"is not a domain or URL (did you mean {fixed}?)")
    if "://" not in text:
        text = "https://" + text
    try:
        parts = urlsplit(text)
    except ValueError as exc:
        raise InvalidDiscovery("company", f"is not a valid domain or URL ({exc})") from None
    check_url(f"{parts.scheme}://{parts.netloc}/", "company", allow_loopback_http)
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN_PATH}"


def parse_poppy_json(
    doc: object, served_host: str, allow_loopback_http: bool = False
) -> CompanyDocument:
    """Validate a poppy.json document served by `served_host` (host[:port]).

    Loopback URLs are accepted only in a document that was itself served from loopback:
    a Company on the internet must not point the agent at the user's own machine.
    """
    allow_loopback_http = allow_loopback_http and is_loopback_host(_host_of(served_host))
    if not isinstance(doc, dict):
        raise InvalidDiscovery("poppy.json", "must be a JSON object")
    version = doc.get("protocol_version")
    if not isinstance(version, str):
        raise InvalidDiscovery("protocol_version", "is required and must be a string")
    if version not in SUPPORTED_DOCUMENT_VERSIONS:
        supported = ", ".join(sorted(SUPPORTED_DOCUMENT_VERSIONS))
        raise InvalidDiscovery(
            "protocol_version", f"is {version!r}; poppy-tui supports {supported}"
        )
    org = doc.get("organization")
    if not isinstance(org, dict):
        raise InvalidDiscovery("organization", "is required and must be an object")
    name = org.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidDiscovery("organization.name", "is required and must be a non-empty string")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidDiscovery("organization.name", f"is longer than {MAX_NAME_LENGTH} characters")
    domain = org.get("domain")
    if not isinstance(domain, str) or not domain:
        raise InvalidDiscovery("organization.domain", "is required and must be a string")
    if domain.lower() != served_host.lower():
        raise InvalidDiscovery(
            "organization.domain", f"is {domain!r} but the document was served by {served_host!r}"
        )
    issuer = None
    auth = doc.get("auth")
    if auth is not None:
        if not isinstance(auth, dict):
            raise InvalidDiscovery("auth", "must be an object")
        if "issuer" in auth:
            issuer = check_url(auth["issuer"], "auth.issuer", allow_loopback_http)
    apis: list[ApiEntry] = []
    raw_apis = doc.get("apis", [])
    if not isinstance(raw_apis, list):
        raise InvalidDiscovery("apis", "must be an array")
    for i, entry in enumerate(raw_apis):
        if not isinstance(entry, dict):
            raise InvalidDiscovery(f"apis[{i}]", "must be an object")
        kind = entry.get("type")
        if kind not in ("openapi", "mcp"):
            continue  # Unknown API types are skipped (spec 7).
        url = check_url(entry.get("url"), f"apis[{i}].url", allow_loopback_http)
        description = entry.get("description", "")
        apis.append(ApiEntry(kind, url, description if isinstance(description, str) else ""))
    endpoints: list[str] = []
    agent = doc.get("agent")
    if agent is not None:
        if not isinstance(agent, dict) or not isinstance(agent.get("protocols", []), list):
            raise InvalidDiscovery("agent.protocols", "must be an array")
        for i, proto in enumerate(agent.get("protocols", [])):
            if isinstance(proto, dict) and proto.get("type") == CONVERSATION_PROTOCOL_TYPE:
                endpoints.append(
                    check_url(
                        proto.get("endpoint"), f"agent.protocols[{i}].endpoint", allow_loopback_http
                    )
                )
    if not apis and not endpoints and "web" not in doc:
        raise InvalidDiscovery("poppy.json", "offers no interface (agent, apis or web)")
    return CompanyDocument(
        protocol_version=version,
        name=name,
        domain=domain,
        issuer=issuer,
        apis=tuple(apis),
        conversation_endpoints=tuple(endpoints),
        supports_operations=document_supports_operations(doc.get("extensions")),
        raw=doc,
    )


_DELTA_SECONDS = re.compile(r"\d+")
# RFC 9111 1.2.2: a delta-seconds beyond 2^31 is taken as 2^31 (so a thousand digits is a number).
_DELTA_SECONDS_CAP = 2**31


def _delta_seconds(value: str) -> int | None:
    """RFC 9111 1.2.2 delta-seconds (quotes tolerated), or None when it isn't one."""
    text = value.strip().strip('"')
    if not _DELTA_SECONDS.fullmatch(text):
        return None
    return _DELTA_SECONDS_CAP if len(text) > 10 else min(int(text), _DELTA_SECONDS_CAP)


def freshness_seconds(headers: Mapping[str, str]) -> int:
    """How long a poppy.json answer stays fresh, from its lower-cased HTTP headers
    (Cache-Control, else Expires against Date), within DISCOVERY_MIN/MAX_FRESH_SECONDS.
    An invalid max-age (negative, not a number) makes the answer stale (RFC 9111 4.2.1)."""
    control = headers.get("cache-control", "") or ""
    directives: dict[str, str | None] = {}
    for part in control.split(","):
        name, _, value = part.strip().partition("=")
        if name:
            directives.setdefault(name.strip().lower(), value if _ else None)
    seconds: float | None = None
    if "no-store" in directives or "no-cache" in directives:
        seconds = 0
    elif "max-age" in directives:
        seconds = _delta_seconds(directives["max-age"] or "") or 0
    elif headers.get("expires"):
        seconds = _expires_in(headers["expires"], headers.get("date"))
    if seconds is None:
        seconds = DISCOVERY_DEFAULT_FRESH_SECONDS
    return int(min(max(seconds, DISCOVERY_MIN_FRESH_SECONDS), DISCOVERY_MAX_FRESH_SECONDS))


def _expires_in(expires: str, date: str | None) -> float:
    try:
        until = parsedate_to_datetime(expires)
    except (TypeError, ValueError, IndexError):
        return 0  # an invalid Expires means "already expired" (RFC 9111 5.3)
    try:
        now = parsedate_to_datetime(date) if date else None
    except (TypeError, ValueError, IndexError):
        now = None
    if until.tzinfo is None:
        return 0
    reference = now if now is not None and now.tzinfo is not None else datetime.now(until.tzinfo)
    return (until - reference).total_seconds()
