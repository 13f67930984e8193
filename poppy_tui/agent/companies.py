"""Discovery (spec 3): fetch and check a Company's poppy.json, then keep it in the store.

HTTPS only. Plain http is allowed only to loopback and only when config.allow_loopback is on
(the demo and tests). Redirects are followed by hand so every hop can be checked: each must be
https, and the document speaks for the host that finally served it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin, urlsplit

from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx2

from poppy_tui.safety.wording import possessive
from poppy_tui.agent.clock import now_utc
from poppy_tui.agent.net.http import HttpAnswer, parse_json_body, request
from poppy_tui.agent.store import CompanyRecord, Store
from poppy_tui.protocol.conventions import (
    CONVERSATION_PROTOCOL_TYPE,
    EXTENSION_NAME,
    EXTENSION_VERSION,
    DISCOVERY_MIN_FRESH_SECONDS,
    MAX_DISCOVERY_BYTES,
    MAX_RESPONSE_BYTES,
)
from poppy_tui.protocol.discovery import (
    check_url,
    discovery_url,
    freshness_seconds,
    is_loopback_host,
    parse_poppy_json,
)
from poppy_tui.protocol.header_values import entity_tag
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
    client: httpx2.AsyncClient,
    url: str,
    allow_loopback: bool,
    limit: int,
    what: str,
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
    client: httpx2.AsyncClient,
    url: str,
    allow_loopback: bool,
    limit: int,
    what: str,
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
        answer = await request(
            client,
            "GET",
            current,
            headers={"Accept": "application/json", **(headers or {})},
            limit=limit,
        )
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
                raise DiscoveryError(
                    f"{url} redirects in a loop ({current} again after {len(visited)} hops)"
                )
            continue
        return current, answer
    raise DiscoveryError(f"{url} redirected more than {MAX_REDIRECTS} times")


async def discover(
    client: httpx2.AsyncClient, store: Store, domain_or_url: str, allow_loopback: bool
) -> CompanyRecord:
    try:
        url = discovery_url(domain_or_url, allow_loopback)
    except InvalidDiscovery as exc:
        # The reason alone: "company: can't be used: …" said it twice (walk K3).
        raise DiscoveryError(f"{domain_or_url!r} can't be used: {exc.reason}") from None
    try:
        final_url, answer = await fetch_document(
            client, url, allow_loopback, MAX_DISCOVERY_BYTES, "poppy.json"
        )
    except DiscoveryError as exc:
        raise DiscoveryError(_plain_http_hint(domain_or_url, str(exc))) from None
    if answer.status != 200:
        raise DiscoveryError(
            f"{final_url} answered HTTP {answer.status}; expected 200 with poppy.json"
        )
    return _keep(store, final_url, answer, allow_loopback)


def _keep(store: Store, final_url: str, answer: HttpAnswer, allow_loopback: bool) -> CompanyRecord:
    document = json_of(answer, "poppy.json", final_url)
    try:
        parsed = parse_poppy_json(document, served_host(final_url), allow_loopback)
    except InvalidDiscovery as exc:
        raise DiscoveryError(f"the poppy.json at {final_url} can't be used: {exc}") from None
    return store.upsert_company(origin_of(final_url), parsed, _cache_state(answer))


def _cache_state(answer: HttpAnswer) -> tuple[str | None, datetime]:
    fresh_for = freshness_seconds(answer.headers)
    return entity_tag(answer.headers.get("etag")), now_utc() + timedelta(seconds=fresh_for)


def _plain_http_hint(target: str, message: str) -> str:
    """`companies add localhost:8400` tries https first; a loopback Company speaking plain http
    answers that with a TLS error. Say what to type instead."""
    text = target.strip()
    if "://" in text:
        return message
    try:
        host = urlsplit("//" + text).hostname or ""
    except ValueError:
        return message
    if is_loopback_host(host) and ("SSL" in message or "TLS" in message):
        return (
            f"{text} did not answer over https, which poppy-tui tries first; if it is a local Company on "
            f"plain http, add it with: poppy-tui companies add http://{text}"
        )
    return message


@dataclass(frozen=True)
class Refreshed:
    company: CompanyRecord
    fetched: bool  # a request went out (the stored copy was stale, or a refresh was asked for)
    changed: bool  # the Company sent a document that differs from the stored one
    problem: str = ""  # why the stored copy is still in use


async def refresh(
    client: httpx2.AsyncClient,
    store: Store,
    company: CompanyRecord,
    allow_loopback: bool,
    force: bool = False,
) -> Refreshed:
    """Bring the Company's poppy.json up to date: nothing when the stored copy is still fresh
    (unless `force`), else a conditional GET (If-None-Match) at its well-known URL. When the
    refresh fails the stored copy stays in use, tried again after the minimum freshness."""
    cache = store.document_cache(company.id)
    if cache is not None and not force and now_utc() < cache[1]:
        return Refreshed(company, False, False)
    # Checked again here, not only when it arrived: an older poppy-tui stored any ETag it got,
    # and one with a non-ASCII character can't be sent in If-None-Match (RFC 9110 8.8.3).
    etag = entity_tag(cache[0]) if cache is not None else None
    try:
        try:
            url = discovery_url(company.base_url, allow_loopback)
        except InvalidDiscovery as exc:  # e.g. a loopback Company once allow_loopback is off
            raise DiscoveryError(f"{company.base_url} can't be used now: {exc}") from None
        final_url, answer = await fetch_document(
            client,
            url,
            allow_loopback,
            MAX_DISCOVERY_BYTES,
            "poppy.json",
            {"If-None-Match": etag} if etag else None,
        )
        if answer.status == 304 and etag:
            fresh_until = now_utc() + timedelta(seconds=freshness_seconds(answer.headers))
            store.keep_document_fresh(
                company.id, entity_tag(answer.headers.get("etag")) or etag, fresh_until
            )
            return Refreshed(store.get_company(company.id), True, False)
        if answer.status != 200:
            raise DiscoveryError(
                f"{final_url} answered HTTP {answer.status}; expected 200 with poppy.json"
            )
        if origin_of(final_url) != origin_of(company.base_url):
            raise DiscoveryError(
                f"{url} now leads to {origin_of(final_url)}, another origin; add that one if you trust it"
            )
        kept = _keep(store, final_url, answer, allow_loopback)
        return Refreshed(kept, True, kept.document != company.document)
    except DiscoveryError as exc:
        retry_at = now_utc() + timedelta(seconds=DISCOVERY_MIN_FRESH_SECONDS)
        store.keep_document_fresh(company.id, etag, retry_at)
        return Refreshed(store.get_company(company.id), True, False, str(exc))


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


def api_origins(company: CompanyRecord) -> set[str]:
    """Where this Company's HTTP API lives: its own origin and the origin of the OpenAPI its
    poppy.json lists (not its MCP server's or conversation endpoint's)."""
    origins = {origin_of(company.base_url)}
    for api in company.apis:
        if (
            isinstance(api, dict)
            and api.get("type") == "openapi"
            and isinstance(api.get("url"), str)
        ):
            origins.add(origin_of(api["url"]))
    return origins


def api_base(company: CompanyRecord) -> str:
    return company.base_url.rstrip("/")


def off_company_message(company: CompanyRecord, url: str) -> str:
    """The one message for a URL that isn't the Company's, whatever its scheme or host."""
    origins = ", ".join(sorted(allowed_origins(company)))
    return (
        f"{url} is not one of {possessive(company.name)} own addresses ({origins}); "
        "poppy-tui sends a Company's requests only to the Company"
    )


def resolve_api_url(company: CompanyRecord, path_or_url: str, allow_loopback: bool) -> str:
    text = path_or_url.strip()
    if not text:
        raise ValueError("no path or URL given")
    if "://" in text:
        url = text
        try:
            origin = origin_of(url)
        except ValueError:
            raise ValueError(f"{text!r} is not a valid URL") from None
        # Checked before the scheme, so every off-Company URL gets the same message.
        if origin not in allowed_origins(company):
            raise ValueError(off_company_message(company, url))
    else:
        url = api_base(company) + ("" if text.startswith("/") else "/") + text
    try:
        check_url(url, "request URL", allow_loopback)
    except InvalidDiscovery as exc:
        raise ValueError(str(exc)) from None
    return url


def openapi_url(company: CompanyRecord) -> str | None:
    return next(
        (a["url"] for a in company.apis if isinstance(a, dict) and a.get("type") == "openapi"), None
    )


def mcp_url(company: CompanyRecord) -> str | None:
    return next(
        (a["url"] for a in company.apis if isinstance(a, dict) and a.get("type") == "mcp"), None
    )


def conversation_endpoint(company: CompanyRecord) -> str | None:
    agent = company.document.get("agent")
    if not isinstance(agent, dict):
        return None
    for proto in agent.get("protocols") or []:
        if (
            isinstance(proto, dict)
            and proto.get("type") == CONVERSATION_PROTOCOL_TYPE
            and isinstance(proto.get("endpoint"), str)
        ):
            return proto["endpoint"]
    return None


async def fetch_openapi(
    client: httpx2.AsyncClient,
    company: CompanyRecord,
    allow_loopback: bool,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    url = openapi_url(company)
    if url is None:
        raise DiscoveryError(f"{company.name} lists no OpenAPI document in its poppy.json")
    _, document = await fetch_json(
        client, url, allow_loopback, MAX_RESPONSE_BYTES, "the OpenAPI document", headers
    )
    if not isinstance(document, dict):
        raise DiscoveryError(f"the OpenAPI document at {url} is not a JSON object")
    return document


def listed_operations_versions(company: CompanyRecord) -> list[str]:
    """The versions of `operations` the Company's poppy.json lists, as written."""
    extensions = company.document.get("extensions")
    entries = extensions.get(EXTENSION_NAME) if isinstance(extensions, dict) else None
    if not isinstance(entries, list):
        return []
    return [
        e["version"] for e in entries if isinstance(e, dict) and isinstance(e.get("version"), str)
    ][:10]


def explain_extension_required(company: CompanyRecord, body: Any, declared: bool) -> str:
    """What an `extension_required` answer means for the person, on its own line: nothing was
    done, and why the Company wanted what poppy-tui did not send."""
    name = company.name
    described = body.get("error_description") if isinstance(body, dict) else None
    said = (
        f' (it says: "{described[:200]}")'
        if isinstance(described, str) and described.strip()
        else ""
    )
    extension = body.get("extension") if isinstance(body, dict) else None
    if isinstance(extension, str) and extension != EXTENSION_NAME:
        return (
            f"{name} refused this with extension_required: it needs the {extension[:80]!r} extension, which "
            f"poppy-tui doesn't speak{said}. Nothing was done; do it on {possessive(name)} own site or ask it another way."
        )
    versions = listed_operations_versions(company)
    listed = ", ".join(repr(v[:20]) for v in versions)
    if not declared and company.supports_operations:
        return (
            f"{name} refused this with extension_required{said}: poppy-tui's copy of its poppy.json didn't "
            f"list operations v{EXTENSION_VERSION}, so the request didn't declare it. Nothing was done. poppy-tui "
            "has read poppy.json again and it now does: send the request again to get the approval here."
        )
    if declared:
        return (
            f"{name} refused this with extension_required although poppy-tui declared operations "
            f"v{EXTENSION_VERSION}{said}: it wants a version poppy-tui doesn't speak (its poppy.json lists "
            f"{listed or 'none'}). Nothing was done; approve it on {possessive(name)} own site."
        )
    if versions:
        return (
            f"{name} needs the operations extension for this, in a version poppy-tui doesn't speak: its "
            f"poppy.json lists {listed}, poppy-tui speaks {EXTENSION_VERSION}{said}. Nothing was done; "
            f"approve it on {possessive(name)} own site."
        )
    return (
        f"{name} needs the operations extension for this, but its poppy.json doesn't offer it, so poppy-tui "
        f"could not declare it{said}. Nothing was done; approve it on {possessive(name)} own site, or run "
        "'poppy-tui companies refresh' if the Company has started offering it."
    )
