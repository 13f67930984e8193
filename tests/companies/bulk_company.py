"""A Company with any number of operations, written from the operations extension v2 text alone
(no poppy_tui imports): for the sending benchmark, in a process of its own
(tests/benchmarks/company_process.py says why), and for tests, in a thread (BulkCompany).

    python tests/companies/bulk_company.py   -> prints its base URL, serves until stdin closes

`POST /items/{n}/cancel` without an approval answers 403 approval_required with an operation
(`cxl_{n}`, one revision per request); with an approval naming a revision it issued, it performs
the cancellation once and answers 200 with the item (a replay gets the same answer). The demo
Company can't serve a thousand distinct operations that can all be performed; this one can, and
its work per request is small and the same for every client. Tests can slow approvals down
(`approval_delay`), see each one as it arrives (`on_approval(headers)`, before it is performed)
and read how many were in progress at once (`most_at_once`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import sys
import threading
from datetime import datetime, timedelta, UTC

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

HOST = "127.0.0.1"
EXPIRY = timedelta(hours=1)


def _approval_of(value: str | None) -> tuple[str, str] | None:
    """operation_id and revision from `Poppy-Approval: operation_id="...", revision="..."`."""
    if not value:
        return None
    found: dict[str, str] = {}
    for part in value.split(","):
        name, _, raw = part.strip().partition("=")
        if raw.startswith('"') and raw.endswith('"') and len(raw) >= 2:
            found[name] = raw[1:-1]
    if "operation_id" in found and "revision" in found:
        return found["operation_id"], found["revision"]
    return None


class BulkState:
    def __init__(self) -> None:
        self.approval_delay = 0.0
        self.on_approval = (
            None  # called with the request's headers (lower-case names) before performing
        )
        self.at_once = 0
        self.most_at_once = 0
        self.perform_count: dict[str, int] = {}


def build_app(base_url: str, state: BulkState | None = None) -> Starlette:
    state = state or BulkState()
    issued: dict[tuple[str, str], int] = {}  # (operation_id, revision) -> item
    performed: dict[str, dict] = {}
    counter = itertools.count(1)

    async def poppy_json(request: Request) -> Response:
        return JSONResponse(
            {
                "protocol_version": "0.4",
                "organization": {"name": "Bench Goods", "domain": base_url.split("://", 1)[1]},
                "apis": [{"type": "openapi", "url": f"{base_url}/openapi.json"}],
                "extensions": {"operations": [{"version": "2"}]},
            }
        )

    async def openapi(request: Request) -> Response:
        return JSONResponse(
            {
                "openapi": "3.1.0",
                "info": {"title": "Bench Goods", "version": "1"},
                "paths": {"/items/{n}/cancel": {"post": {"operationId": "cancelItem"}}},
            }
        )

    async def cancel(request: Request) -> Response:
        item = int(request.path_params["n"])
        await request.body()
        if "poppy-session" not in request.headers:
            return JSONResponse({"error": "invalid_session"}, status_code=403)
        operation_id = f"cxl_{item}"
        approval = _approval_of(request.headers.get("poppy-approval"))
        if approval is not None and approval[0] == operation_id and issued.get(approval) == item:
            state.at_once += 1
            state.most_at_once = max(state.most_at_once, state.at_once)
            try:
                if state.on_approval is not None:
                    state.on_approval(dict(request.headers))
                if state.approval_delay:
                    await asyncio.sleep(state.approval_delay)
                if operation_id not in performed:
                    performed[operation_id] = {"item": item, "status": "cancelled"}
                    state.perform_count[operation_id] = state.perform_count.get(operation_id, 0) + 1
            finally:
                state.at_once -= 1
            return JSONResponse(performed[operation_id])
        revision = f"r{next(counter)}"
        issued[(operation_id, revision)] = item
        expires = (datetime.now(UTC) + EXPIRY).strftime("%Y-%m-%dT%H:%M:%SZ")
        return JSONResponse(
            {
                "error": "approval_required",
                "operation": {
                    "operation_id": operation_id,
                    "revision": revision,
                    "summary": f"Cancel item {item}. No fee is charged.",
                    "terms": {"item": item, "action": "cancel"},
                    "expires_at": expires,
                },
            },
            status_code=403,
        )

    return Starlette(
        routes=[
            Route("/.well-known/poppy.json", poppy_json, methods=["GET"]),
            Route("/openapi.json", openapi, methods=["GET"]),
            Route("/items/{n:int}/cancel", cancel, methods=["POST"]),
        ]
    )


class _Server(uvicorn.Server):
    def capture_signals(self):
        return contextlib.nullcontext()


class BulkCompany:
    """Served on 127.0.0.1 in a thread; stop() when done."""

    def __init__(self) -> None:
        self.state = BulkState()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, 0))
        self.base_url = f"http://{HOST}:{sock.getsockname()[1]}"
        config = uvicorn.Config(
            build_app(self.base_url, self.state),
            log_level="critical",
            access_log=False,
            lifespan="off",
        )
        self._server = _Server(config)
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[sock])), daemon=True
        )
        self._thread.start()
        while not self._server.started:
            threading.Event().wait(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)


def main() -> int:
    company = BulkCompany()
    print(company.base_url, flush=True)
    sys.stdin.read()  # the benchmark closes our stdin to stop us
    company.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
