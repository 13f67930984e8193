"""Discovery (spec 3): fetch and check a Company's poppy.json, then keep it in the store.

HTTPS only. Plain http is allowed only to loopback and only when config.allow_loopback is on
(the demo and tests). Redirects are followed by hand so every hop can be checked: each must be
https, and the document speaks for the host that finally served it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from poppy_tui.agent.http import HttpAnswer, parse_json_body, request
from poppy_tui.agent.store import CompanyRecord, Store
from poppy_tui.protocol.conventions import CONVERSATION_PROTOCOL_TYPE, MAX_DISCOVERY_BYTES, MAX_RESPONSE_BYTES
from poppy_tui.protocol.discovery import check_url, discovery_url, is_loopback_host, parse_poppy_json
from poppy_tui.protocol.errors import InvalidDiscovery
from poppy_tui.protocol.outcomes import NotSent, Unknown

MAX_REDIRECTS = 5


class DiscoveryError(RuntimeError):
    """poppy.json could not be fetched or used. The message names the URL and the reason."""


def served_host(url: str) -> str:
    """The host a document was served by, as organization.domain names it: with the port
    when it is not the scheme's default (loopback Companies listen on their own port)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    default = {"https": 443, "http": 80}.get(parts.scheme)
    if parts.port is not None and parts.port != default:
        host = f"{host}:{parts.port}"
    return host


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


async def fetch_json(
    client: httpx.AsyncClient, url: str, allow_loopback: bool, limit: int, what: str,
    headers: dict[str, str] | None = None,
) -> tuple[str, Any]:
    """GET a JSON document, following up to MAX_REDIRECTS https redirects. Returns (final URL, JSON).
    Every failure is a DiscoveryError with one line naming the URL and the reason."""
    final_url, answer = await fetch_document(client, url, allow_loopback, limit, what, headers)
    if answer.status != 200:
        raise DiscoveryError(f"{final_url} answered HTTP {answer.status}; expected 200 with {what}")
    return final_url, json_of(answer, what, final_url)


def json_of(answer: HttpAnswer, what: str, url: str) -> Any:
    if answer.error:
        raise DiscoveryError(f"{what} at {url} can't be used: {answer.error}")
    if answer.body is not None:
        return answer.body
    if not answer.raw.strip():
        raise DiscoveryError(f"{what} at {url} is empty")
    try:
        return parse_json_body(answer.raw)
    except ValueError as exc:
        kind = answer.headers.get("content-type", "no content type").split(";")[0].strip()
        raise DiscoveryError(f"{what} at {url} is not JSON ({kind}): {exc}") from None


async def fetch_document(
    client: httpx.AsyncClient, url: str, allow_loopback: bool, limit: int, what: str,
    headers: dict[str, str] | None = None,
) -> tuple[str, HttpAnswer]:
    """GET `url`, following redirects by hand (each hop https and checked). Returns the final URL
    and its answer, whatever its status; transport failures and redirect trouble raise."""
    current = url
    visited: list[str] = []
    for hop in range(MAX_REDIRECTS + 1):
        try:
            if hop > 0 and urlsplit(current).scheme != "https":
                raise DiscoveryError(f"{what}: a redirect led to {current}, which is not https")
            check_url(current, what, allow_loopback)
        except InvalidDiscovery as exc:
            raise DiscoveryError(str(exc)) from None
        visited.append(current)
        answer = await request(client, "GET", current, headers={"Accept": "application/json", **(headers or {})}, limit=limit)
        if isinstance(answer, (NotSent, Unknown)):
            raise DiscoveryError(f"could not fetch {current}: {answer.detail}")
        assert isinstance(answer, HttpAnswer)
        if answer.cut_off:
            raise DiscoveryError(f"{what} at {current} can't be used: {answer.error}")
        if answer.status in (301, 302, 303, 307, 308):
            location = answer.headers.get("location")
            if not location:
                raise DiscoveryError(f"{current} redirected without a Location")
            current = urljoin(current, location)
            if current in visited:
                raise DiscoveryError(f"{url} redirects in a loop ({current} again after {len(visited)} hops)")
            continue
        return current, answer
    raise DiscoveryError(f"{url} redirected more than {MAX_REDIRECTS} times")


async def discover(
    client: httpx.AsyncClient, store: Store, domain_or_url: str, allow_loopback: bool
) -> CompanyRecord:
    try:
        url = discovery_url(domain_or_url, allow_loopback)
    except InvalidDiscovery as exc:
        raise DiscoveryError(f"{domain_or_url!r} can't be used: {exc}") from None
    final_url, document = await fetch_json(client, url, allow_loopback, MAX_DISCOVERY_BYTES, "poppy.json")
    try:
        parsed = parse_poppy_json(document, served_host(final_url), allow_loopback)
    except InvalidDiscovery as exc:
        raise DiscoveryError(f"the poppy.json at {final_url} can't be used: {exc}") from None
    return store.upsert_company(origin_of(final_url), parsed)


def allowed_origins(company: CompanyRecord) -> set[str]:
    """Where this Company's requests may go: its own origin and the interfaces its poppy.json lists.

    Content from one Company never makes the agent send a Session header anywhere else.
    """
    origins = {origin_of(company.base_url)}
    for api in company.apis:
        if isinstance(api, dict) and isinstance(api.get("url"), str):
            origins.add(origin_of(api["url"]))
    agent = company.document.get("agent")
    if isinstance(agent, dict):
        for proto in agent.get("protocols") or []:
            if isinstance(proto, dict) and isinstance(proto.get("endpoint"), str):
                origins.add(origin_of(proto["endpoint"]))
    return origins


def api_base(company: CompanyRecord) -> str:
    return company.base_url.rstrip("/")


def resolve_api_url(company: CompanyRecord, path_or_url: str, allow_loopback: bool) -> str:
    text = path_or_url.strip()
    if not text:
        raise ValueError("no path or URL given")
    if "://" in text:
        url = text
    else:
        url = api_base(company) + ("" if text.startswith("/") else "/") + text
    try:
        check_url(url, "request URL", allow_loopback)
    except InvalidDiscovery as exc:
        raise ValueError(str(exc)) from None
    if origin_of(url) not in allowed_origins(company):
        raise ValueError(
            f"{url} is not one of {company.name}'s own addresses ({', '.join(sorted(allowed_origins(company)))}); "
            "poppy-tui sends a Company's requests only to the Company"
        )
    return url


def openapi_url(company: CompanyRecord) -> str | None:
    return next((a["url"] for a in company.apis if isinstance(a, dict) and a.get("type") == "openapi"), None)


def mcp_url(company: CompanyRecord) -> str | None:
    return next((a["url"] for a in company.apis if isinstance(a, dict) and a.get("type") == "mcp"), None)


def conversation_endpoint(company: CompanyRecord) -> str | None:
    agent = company.document.get("agent")
    if not isinstance(agent, dict):
        return None
    for proto in agent.get("protocols") or []:
        if isinstance(proto, dict) and proto.get("type") == CONVERSATION_PROTOCOL_TYPE and isinstance(proto.get("endpoint"), str):
            return proto["endpoint"]
    return None


async def fetch_openapi(
    client: httpx.AsyncClient, company: CompanyRecord, allow_loopback: bool, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    url = openapi_url(company)
    if url is None:
        raise DiscoveryError(f"{company.name} lists no OpenAPI document in its poppy.json")
    _, document = await fetch_json(client, url, allow_loopback, MAX_RESPONSE_BYTES, "the OpenAPI document", headers)
    if not isinstance(document, dict):
        raise DiscoveryError(f"the OpenAPI document at {url} is not a JSON object")
    return document


def is_loopback_company(company: CompanyRecord) -> bool:
    return is_loopback_host(urlsplit(company.base_url).hostname or "")
