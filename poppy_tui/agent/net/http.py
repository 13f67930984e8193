"""One place for how the agent talks HTTP: client settings, bounded reads, and what a failure means.

The question every transport must answer after a failure is "did the Company get it?".
httpx2's exception classes answer it (research notes, section 7.4), and the mapping lives here.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Mapping

import httpx2

from poppy_tui.agent.net.netguard import guarded_client_options, pool_limits
from poppy_tui.protocol.conventions import MAX_RESPONSE_BYTES
from poppy_tui.protocol.jsonlimits import MalformedJson, json_depth, loads_strict
from poppy_tui.protocol.outcomes import NotSent, Unknown

USER_AGENT = "poppy-tui/0.1"
CONNECT_TIMEOUT_SECONDS = 10.0
MAX_JSON_DEPTH = 64
# A fetch's whole budget is this many read timeouts (plus a long poll's hold): a slow but
# steady answer fits, a server that trickles a byte just inside each read timeout does not.
DEADLINE_FACTOR = 2.0


def overall_deadline(read_timeout_seconds: float, extra_read_seconds: float = 0.0) -> float:
    """Seconds one fetch from a Company may take from start to its last byte."""
    return DEADLINE_FACTOR * read_timeout_seconds + extra_read_seconds


# Exceptions raised before any byte of the request could have reached the Company: no
# connection (refused by netguard, unreachable, no TLS handshake: a certificate refused), a
# request that can't be written at all (a header value that isn't ASCII, a header h11 refuses,
# a scheme or URL httpx2 can't send; netguard's transport turns a refusal that comes after part of
# a request left into a WriteError), or a proxy that refused the tunnel to the Company.
NOT_SENT_ERRORS: tuple[type[BaseException], ...] = (
    httpx2.ConnectError,
    httpx2.ConnectTimeout,
    httpx2.PoolTimeout,
    httpx2.LocalProtocolError,
    httpx2.UnsupportedProtocol,
    httpx2.ProxyError,
    httpx2.InvalidURL,
    UnicodeEncodeError,
)
# Exceptions raised once the request was (maybe partly) on the wire: the Company may have acted.
UNKNOWN_ERRORS: tuple[type[BaseException], ...] = (
    httpx2.ReadTimeout,
    httpx2.WriteTimeout,
    httpx2.ReadError,
    httpx2.WriteError,
    httpx2.RemoteProtocolError,
)


# A mount of None means "the client's own transport", i.e. no proxy, for these hosts.
_LOOPBACK_PATTERNS = ("all://127.0.0.1", "all://localhost", "all://[::1]")


class ResponseTooLarge(ValueError):
    pass


def _no_cookies() -> http.cookiejar.CookieJar:
    # A Company knows the agent by its Session JWT alone. A cookie kept from one answer and sent
    # with the next would outlive the Session it came in, linking Sessions the agent keeps apart
    # (a new one after invalid_session). An empty allow-list refuses every domain.
    return http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))


def make_client(
    timeout_seconds: float,
    allow_loopback: bool = True,
    while_waiting: Callable[[], None] | None = None,
) -> httpx2.AsyncClient:
    """The client for every request to a Company (discovery, API, conversations, approvals, outcome
    probes), httpx2 like the MCP SDK's and authlib's clients (MCP, sign-in), which are built over
    the same netguard transport: one HTTP library. Redirects are never followed implicitly: a redirected approval would leave the
    interface that returned the operation, and discovery checks every hop.
    `while_waiting` runs each time a request has been sent, while its answer is awaited (netguard)."""
    options = guarded_client_options(allow_loopback, pool_limits(), while_waiting)
    return httpx2.AsyncClient(
        **options,
        timeout=httpx2.Timeout(
            timeout_seconds, connect=min(CONNECT_TIMEOUT_SECONDS, timeout_seconds)
        ),
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT},
        cookies=_no_cookies(),
        # A user's proxy settings are honoured, but never for loopback: the demo and tests
        # run there, and a proxy in between would see every Session header.
        trust_env=True,
        mounts=dict.fromkeys(_LOOPBACK_PATTERNS),
    )


def classify_transport_error(exc: BaseException) -> NotSent | Unknown:
    if isinstance(exc, UnicodeEncodeError):
        return NotSent("the request can't be written: a header value is not ASCII")
    if isinstance(exc, NOT_SENT_ERRORS):
        return NotSent(f"{type(exc).__name__}: {exc or 'could not connect'}")
    if isinstance(exc, UNKNOWN_ERRORS):
        return Unknown(f"{type(exc).__name__}: {exc or 'no complete answer'}")
    # Anything else (an unexpected transport failure) is treated as possibly delivered:
    # claiming "not sent" wrongly could make us send twice.
    return Unknown(f"{type(exc).__name__}: {exc}")


@dataclass
class HttpAnswer:
    """What came back. `error` is set when the status arrived but the body could not be read."""

    status: int
    headers: dict[str, str]
    raw: bytes
    body: Any = None
    error: str | None = None
    url: str = ""
    cut_off: bool = False  # the status arrived, then the connection broke mid-body
    extra: dict[str, Any] = field(default_factory=dict)

    def for_record(self) -> dict[str, Any]:
        """What we keep of a response: status, the headers that matter, and the body."""
        keep = {
            k: v
            for k, v in self.headers.items()
            if k in ("content-type", "retry-after", "location", "www-authenticate")
        }
        body: Any = self.body
        if body is None and self.raw:
            body = self.raw[:4096].decode("utf-8", "replace")
        record = {"status": self.status, "headers": keep, "body": body}
        if self.error:
            record["error"] = self.error
        return record


async def read_bounded(response: httpx2.Response, limit: int = MAX_RESPONSE_BYTES) -> bytes:
    """The decoded body, refusing more than `limit` bytes (counted after decompression)."""
    declared = response.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ResponseTooLarge(
            f"the Company announced {declared} bytes, more than the {limit} allowed"
        )
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise ResponseTooLarge(f"the response is more than the {limit} bytes allowed")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json_body(raw: bytes) -> Any:
    """Parsed JSON, or None for an empty body. Raises ValueError with a reason."""
    if not raw.strip():
        return None
    try:
        value = loads_strict(raw)
    except MalformedJson as exc:
        raise ValueError(f"the body is malformed: {exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"the body is not valid JSON ({exc})") from None
    except RecursionError:
        raise ValueError("the body nests too deeply") from None
    if json_depth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise ValueError(f"the body nests deeper than {MAX_JSON_DEPTH} levels")
    return value


async def request(
    client: httpx2.AsyncClient,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    content: bytes | None = None,
    params: Mapping[str, str] | None = None,
    limit: int = MAX_RESPONSE_BYTES,
    extra_read_seconds: float = 0.0,
) -> HttpAnswer | NotSent | Unknown:
    """Send once. Transport failures come back as NotSent/Unknown, never as exceptions.

    `extra_read_seconds` lengthens the read timeout for long polls, which hold the answer back.
    The whole exchange has an overall deadline (`overall_deadline`), so an answer trickled in
    below every read timeout is abandoned like a broken one.
    """
    timeout: Any = httpx2.USE_CLIENT_DEFAULT
    base = client.timeout
    if extra_read_seconds:
        timeout = httpx2.Timeout(
            connect=base.connect,
            read=(base.read or 30.0) + extra_read_seconds,
            write=base.write,
            pool=base.pool,
        )
    deadline = overall_deadline(base.read or 30.0, extra_read_seconds)
    status: int | None = None
    answer_headers: dict[str, str] = {}
    final_url = url
    raw = b""
    try:
        async with asyncio.timeout(deadline):
            async with client.stream(
                method, url, headers=headers, content=content, params=params, timeout=timeout
            ) as response:
                status = response.status_code
                answer_headers = {k.lower(): v for k, v in response.headers.items()}
                final_url = str(response.url)
                try:
                    raw = await read_bounded(response, limit)
                except ResponseTooLarge as exc:
                    return HttpAnswer(status, answer_headers, b"", None, str(exc), final_url)
                except httpx2.DecodingError as exc:
                    # The whole answer arrived but its encoding can't be undone: the Company
                    # answered, and what it said is unreadable.
                    return HttpAnswer(
                        status,
                        answer_headers,
                        b"",
                        None,
                        f"the body can't be decoded ({exc})",
                        final_url,
                    )
                except httpx2.TransportError as exc:
                    # The status line arrived, so the Company did answer; only the body is missing.
                    return HttpAnswer(
                        status,
                        answer_headers,
                        b"",
                        None,
                        f"the body was cut off ({exc})",
                        final_url,
                        cut_off=True,
                    )
    except TimeoutError:
        too_slow = f"the Company took longer than {deadline:g} s to answer (overall deadline)"
        if status is None:
            return Unknown(too_slow)
        return HttpAnswer(
            status,
            answer_headers,
            b"",
            None,
            f"the body was cut off: {too_slow}",
            final_url,
            cut_off=True,
        )
    except (httpx2.TransportError, httpx2.InvalidURL, UnicodeEncodeError) as exc:
        return classify_transport_error(exc)
    answer = HttpAnswer(status, answer_headers, raw, url=final_url)
    try:
        answer.body = parse_json_body(raw)
    except ValueError as exc:
        if "json" in answer_headers.get("content-type", ""):
            answer.error = str(exc)
    return answer
