"""Helpers shared by the reliability tests and the child processes they start and kill.

Importable as `tests.reliability.support` from the repository root (the children get it on
PYTHONPATH). Nothing here fakes the program: stores are real SQLite files written through
the real Store API, Companies are the real demo server on loopback, agents are real Agents.
"""

from __future__ import annotations

import hashlib
import json
import os
import selectors
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from collections.abc import Iterator

from tests.waiting import wait_until_blocking

REPO = Path(__file__).resolve().parents[2]
CHILDREN = Path(__file__).resolve().parent / "children"
PYTHON = sys.executable

EXCHANGE_PATH = "/api/orders/ord_7Hk2/exchanges"
EXCHANGE_BODY = {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"}
EXCHANGE_OPERATION_ID = "exc_5Rt2"
CANCEL_PATH = "/api/subscriptions/sub_6Tc1/cancel"


# ---- processes ---------------------------------------------------------------------------------


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("POPPY_TUI_")}
    env["PYTHONPATH"] = str(REPO) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"  # never touch a real keyring
    env.update(extra)
    return env


class Child:
    """A child Python process that reports progress as lines on stdout."""

    def __init__(self, script: str, *args: str, **env: str) -> None:
        self.proc = subprocess.Popen(
            [PYTHON, str(CHILDREN / script), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=child_env(**env),
            cwd=str(REPO),
        )
        self.lines: list[str] = []
        self._buffer = b""

    def _read_available(self, timeout: float) -> bool:
        assert self.proc.stdout is not None
        # A selector, not select.select: that refuses descriptors past 1024, which a long run reaches.
        with selectors.DefaultSelector() as selector:
            selector.register(self.proc.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout)
        if not ready:
            return False
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            return False
        self._buffer += chunk
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self.lines.append(line.decode("utf-8", "replace"))
        return True

    def expect(self, prefix: str, timeout: float = 30.0) -> str:
        """Wait for a line starting with `prefix`; returns it. Fails with the child's stderr."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for line in self.lines[seen:]:
                if line.startswith(prefix):
                    return line
            seen = len(self.lines)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"child never said {prefix!r}; said {self.lines!r}; stderr: {self.stderr()}"
                )
            if not self._read_available(min(remaining, 0.2)) and self.proc.poll() is not None:
                self._read_available(0)
                if any(line.startswith(prefix) for line in self.lines[seen:]):
                    continue
                raise AssertionError(
                    f"child exited ({self.proc.returncode}) before saying {prefix!r}; said {self.lines!r}; "
                    f"stderr: {self.stderr()}"
                )

    def drain(self) -> list[str]:
        while self._read_available(0):
            pass
        return self.lines

    def kill9(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        assert self.proc.returncode == -signal.SIGKILL or self.proc.returncode is not None

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode("utf-8", "replace")[-3000:]

    def wait(self, timeout: float = 60) -> int:
        code = self.proc.wait(timeout)
        self.drain()
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill9()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@contextmanager
def child(script: str, *args: str, **env: str) -> Iterator[Child]:
    running = Child(script, *args, **env)
    try:
        yield running
    finally:
        running.close()


# ---- stores --------------------------------------------------------------------------------------


def demo_document(domain: str = "127.0.0.1:9"):
    from poppy_tui.protocol.discovery import parse_poppy_json

    return parse_poppy_json(
        {
            "protocol_version": "0.4",
            "organization": {"name": "Manzanita Outfitters", "domain": domain},
            "apis": [{"type": "openapi", "url": f"http://{domain}/openapi.json"}],
            "extensions": {"operations": [{"version": "2"}]},
        },
        domain,
        allow_loopback_http=True,
    )


def operation(
    operation_id: str,
    revision: str = "r1",
    summary: str | None = None,
    expires_at: str = "2099-01-01T00:00:00Z",
):
    from poppy_tui.protocol.operation import parse_operation

    return parse_operation(
        {
            "operation_id": operation_id,
            "revision": revision,
            "summary": summary
            or f"Exchange item {operation_id} for $70.00 more, charged to the card used for the order.",
            "terms": {
                "order_id": "ord_7Hk2",
                "price_difference": {"amount": "70.00", "currency": "USD"},
            },
            "expires_at": expires_at,
        }
    )


def fill_store(path: Path, count: int, approve_every: int = 3):
    """A store with `count` operations written through the real Store API; returns the open Store."""
    from poppy_tui.agent.store import Store
    from poppy_tui.protocol.requests import ApiRequest

    store = Store.open(path)
    company = store.upsert_company("http://127.0.0.1:9", demo_document())
    for i in range(count):
        # A request of its own for each: approvals of equal requests wait for each other (Ops 7).
        request_id = store.add_request(
            company.id,
            ApiRequest("POST", "http://127.0.0.1:9" + EXCHANGE_PATH, {**EXCHANGE_BODY, "n": i}),
            "cli",
        )
        result = store.record_operation(
            company.id, request_id, company.session_id, operation(f"op{i:06d}")
        )
        if approve_every and i % approve_every == 0:
            store.approve(result.operation_row, result.revision_id, 0.0)
    return store


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _every_column(con: sqlite3.Connection, table: str) -> str:
    count = len(con.execute(f"SELECT * FROM {table} LIMIT 0").description)
    return ", ".join(str(n) for n in range(1, count + 1))


def table_snapshot(path: Path) -> dict[str, list[tuple]]:
    """Every row of every table, read with plain sqlite3 (read-only)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        tables = con.execute(
            "SELECT name, sql FROM sqlite_master WHERE type='table' ORDER BY name"
        ).fetchall()
        # A table WITHOUT ROWID (store migration 10's) is ordered by every column instead.
        return {
            name: con.execute(
                f"SELECT * FROM {name} ORDER BY "
                + ("rowid" if "WITHOUT ROWID" not in sql.upper() else _every_column(con, name))
            ).fetchall()
            for name, sql in tables
        }
    finally:
        con.close()


def integrity(path: Path) -> str:
    con = sqlite3.connect(path, timeout=30)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


def consistency_problems(path: Path) -> list[str]:
    """Cross-table invariants every committed state must satisfy (each change is one transaction)."""
    problems: list[str] = []
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        for op_id, status, approved, key, current in con.execute(
            "SELECT id, status, approved_revision_id, idempotency_key, current_revision_id FROM operations"
        ):
            if current is None:
                problems.append(f"operation {op_id} has no current revision")
            if status in ("approved", "sending", "performed", "outcome_unknown"):
                decided = con.execute(
                    "SELECT count(*) FROM decisions WHERE operation_row=? AND decision='approved'",
                    (op_id,),
                ).fetchone()[0]
                if decided == 0:
                    problems.append(f"operation {op_id} is {status} with no approval decision")
                if status in ("approved", "sending") and (approved is None or not key):
                    problems.append(
                        f"operation {op_id} is {status} without approved revision or key"
                    )
            if status == "declined":
                sent = con.execute(
                    "SELECT count(*) FROM attempts WHERE operation_row=?", (op_id,)
                ).fetchone()[0]
                last = con.execute(
                    "SELECT decision FROM decisions WHERE operation_row=? ORDER BY id DESC LIMIT 1",
                    (op_id,),
                ).fetchone()
                if last is None or last[0] != "declined":
                    problems.append(
                        f"operation {op_id} is declined but its last decision is {last}"
                    )
                if sent:
                    problems.append(f"declined operation {op_id} has {sent} send attempts")
        for (attempt_op,) in con.execute("SELECT operation_row FROM attempts"):
            if (
                con.execute("SELECT count(*) FROM operations WHERE id=?", (attempt_op,)).fetchone()[
                    0
                ]
                != 1
            ):
                problems.append(f"attempt for missing operation {attempt_op}")
    finally:
        con.close()
    return problems


# ---- the demo Company, restartable on the same port with the same state --------------------------


class RestartableCompany:
    """The real demo Company app (build_app over one CompanyContext), served by uvicorn on a
    fixed loopback port. stop() makes the port refuse connections; start() serves the *same*
    shop and operation ledger again, as a Company coming back after an outage would."""

    def __init__(self, faults: Any = None) -> None:
        from poppy_tui.demo.context import CompanyContext
        from poppy_tui.demo.faults import Faults

        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self.context = CompanyContext(
            base_url=f"http://127.0.0.1:{self.port}", faults=faults or Faults()
        )
        self._server = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.approval_requests = 0  # requests that reached the server carrying Poppy-Approval
        self.requests_in_flight = (
            0  # HTTP requests the Company is still handling (sleeping on, say)
        )

    @property
    def base_url(self) -> str:
        return self.context.base_url

    @property
    def state(self):
        return self.context.shop

    def start(self) -> RestartableCompany:
        import uvicorn

        from poppy_tui.demo.app import build_app
        from poppy_tui.demo.server import quiet_logging  # keep uvicorn off the terminal

        quiet_logging()

        class _Server(uvicorn.Server):
            def capture_signals(self):  # pytest owns signals
                import contextlib

                return contextlib.nullcontext()

        # proto=IPPROTO_TCP, or asyncio won't set TCP_NODELAY on accepted sockets and every
        # response waits ~40 ms for a delayed ACK (headers and body are separate writes).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        app = build_app(self.context)

        async def observed(scope, receive, send):  # counts, changes nothing
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            with self._lock:
                self.requests_in_flight += 1
                if any(name == b"poppy-approval" for name, _ in scope["headers"]):
                    self.approval_requests += 1
            try:
                await app(scope, receive, send)
            finally:
                with self._lock:
                    self.requests_in_flight -= 1

        config = uvicorn.Config(
            observed,
            log_config=None,
            log_level="critical",
            access_log=False,
            lifespan="on",
            http="h11",
            loop="asyncio",
            ws="none",
            timeout_graceful_shutdown=1,
        )
        server = _Server(config)

        def run() -> None:
            try:
                server.run(sockets=[sock])
            finally:
                sock.close()

        thread = threading.Thread(target=run, daemon=True, name=f"restartable-company-{self.port}")
        thread.start()
        wait_until_blocking(
            lambda: server.started or not thread.is_alive(),
            timeout=15,
            step=0.01,
            describe="the demo Company starting",
        )
        if not server.started:
            raise RuntimeError("the demo Company did not start")
        self._server, self._thread = server, thread
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            assert self._thread is not None
            self._thread.join(10)
            self._server = self._thread = None

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Until the Company has finished every request it is still handling."""
        wait_until_blocking(
            lambda: not self.requests_in_flight,
            timeout=timeout,
            describe=lambda: f"{self.requests_in_flight} request(s) still in the Company",
        )

    def performed(self, operation_id: str = EXCHANGE_OPERATION_ID) -> int:
        return self.context.shop.performed(operation_id)

    def in_progress(self, operation_id: str = EXCHANGE_OPERATION_ID) -> bool:
        return self.context.desk.in_progress(operation_id)

    def __enter__(self) -> RestartableCompany:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def refuses_connections(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return True
        return False


def write_config(home: Path, **settings: Any) -> None:
    """config.toml for a test home: the signing key in a 0600 file (no keyring daemon here)."""
    settings = {"key_storage": "file", **settings}
    lines = []
    for key, value in settings.items():
        lines.append(f"{key} = {json.dumps(value)}")
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "config.toml").write_text("\n".join(lines) + "\n")
