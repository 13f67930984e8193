"""The demo Company (poppy_tui.demo), served for real on 127.0.0.1, behind a recorder.

The recorder keeps every HTTP request exactly as the Company received it (method, path,
query, headers, body bytes), so tests can check the wire byte for byte. A test can also
script answers the demo never gives on its own (a Retry-After HTTP-date, a protocol
violation, a new revision, invalid_session, a slow answer): each `Rule` matches a request
and either answers it itself or delays it and lets the demo answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterator


from poppy_tui.demo.faults import Faults
from poppy_tui.demo.server import RunningCompany, start_company
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.approval import parse_approval_header


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    query: str
    headers: dict[str, str]  # lower-case names; the raw value as sent
    body: bytes
    at: float

    @property
    def approval(self) -> str | None:
        return self.headers.get(c.HEADER_APPROVAL.lower())

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def jsonrpc_method(self) -> str | None:
        try:
            data = self.json()
        except ValueError:
            return None
        return data.get("method") if isinstance(data, dict) else None

    @property
    def mcp_approval(self) -> Any:
        data = self.json() if self.jsonrpc_method == "tools/call" else None
        meta = (data.get("params") or {}).get("_meta") if isinstance(data, dict) else None
        return (meta or {}).get(c.MCP_APPROVAL_META_KEY)

    @property
    def message(self) -> dict[str, Any] | None:
        data = (
            self.json() if self.method == "POST" and "/poppy/conversations" in self.path else None
        )
        return data.get("message") if isinstance(data, dict) else None


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Rule:
    """When `match(received)` holds (at most `times` times): wait `delay` seconds, then send
    `answer(received)` if given, else let the demo answer."""

    match: Callable[[Received], bool]
    answer: Callable[[Received], Answer] | None = None
    delay: float = 0.0
    times: int = 1
    used: int = 0


def is_api_approval(r: Received) -> bool:
    return r.method == "POST" and r.path.startswith("/api/") and r.approval is not None


def is_api_first_request(r: Received) -> bool:
    return r.method == "POST" and r.path.startswith("/api/") and r.approval is None


def is_mcp_tool_approval(r: Received) -> bool:
    return r.path == "/mcp" and r.mcp_approval is not None


def approval_message(r: Received) -> bool:
    message = r.message or {}
    return isinstance(message.get("extensions"), dict) and "operations" in message["extensions"]


def operation_for(
    approval_header: str, revision: str, summary: str = "Exchange the jacket.", **extra: Any
) -> dict:
    approval = parse_approval_header(approval_header)
    return {
        "operation_id": approval.operation_id,
        "revision": revision,
        "summary": summary,
        "expires_at": extra.pop("expires_at", "2099-01-01T00:00:00Z"),
        **extra,
    }


class Recorder:
    def __init__(self, app: Any) -> None:
        self.app = app
        self.received: list[Received] = []
        self.rules: list[Rule] = []
        self._lock = threading.Lock()

    def add(self, rule: Rule) -> Rule:
        with self._lock:
            self.rules.append(rule)
        return rule

    def requests(self, predicate: Callable[[Received], bool] | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self.received if predicate is None or predicate(r)]

    def _rule_for(self, received: Received) -> Rule | None:
        with self._lock:
            for rule in self.rules:
                if rule.used < rule.times and rule.match(received):
                    rule.used += 1
                    return rule
        return None

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks = []
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        received = Received(
            scope["method"],
            scope["path"],
            scope.get("query_string", b"").decode("latin-1"),
            {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]},
            body,
            time.monotonic(),
        )
        with self._lock:
            self.received.append(received)
        rule = self._rule_for(received)
        if rule is not None and rule.delay:
            await asyncio.sleep(rule.delay)
        if rule is not None and rule.answer is not None:
            answer = rule.answer(received)
            payload = json.dumps(answer.body).encode()
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ]
            headers += [(k.lower().encode(), v.encode()) for k, v in answer.headers.items()]
            await send({"type": "http.response.start", "status": answer.status, "headers": headers})
            await send({"type": "http.response.body", "body": payload})
            return
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class LiveCompany:
    """The demo Company with a Recorder in front: every request kept as received, scripted answers."""

    def __init__(self, running: RunningCompany, recorder: Recorder):
        self.running = running
        self.context = running.context
        self.recorder = recorder

    @property
    def base_url(self) -> str:
        return self.context.base_url

    @property
    def issuer(self) -> str:
        return self.context.issuer

    @property
    def state(self):
        return self.context.shop

    def performed(self, operation_id: str) -> int:
        return self.context.shop.performed(operation_id)

    def requests(self, predicate: Callable[[Received], bool] | None = None) -> list[Received]:
        return self.recorder.requests(predicate)

    def add(self, rule: Rule) -> Rule:
        return self.recorder.add(rule)

    def stop(self) -> None:
        self.running.stop()


def start_live_company(
    faults: Faults | str | None = None,
    expiry_seconds: float = 900,
    extension_version: str | None = c.EXTENSION_VERSION,
) -> LiveCompany:
    if isinstance(faults, str):
        faults = Faults.parse(faults)
    recorders: list[Recorder] = []

    def wrap(app: Any) -> Recorder:
        recorders.append(Recorder(app))
        return recorders[0]

    running = start_company(
        faults, expiry_seconds=expiry_seconds, extension_version=extension_version, wrap=wrap
    )
    return LiveCompany(running, recorders[0])


@contextlib.contextmanager
def running_company(faults: Faults | str | None = None, **kwargs: Any) -> Iterator[LiveCompany]:
    company = start_live_company(faults, **kwargs)
    try:
        yield company
    finally:
        company.stop()
