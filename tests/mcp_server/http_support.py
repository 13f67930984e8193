"""`poppy-tui mcp --http` as a real subprocess, and the MCP SDK's streamable-HTTP client for it."""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from collections.abc import AsyncIterator, Iterator

from tests.cli.cli_support import readable, subprocess_env

START_TIMEOUT_SECONDS = 60.0


class HttpGate:
    """A running `poppy-tui mcp --http`: its URL, and what it printed (read after stop())."""

    def __init__(self, process: subprocess.Popen, url: str, first_line: str, log: Path) -> None:
        self.process = process
        self.url = url
        self.first_line = first_line
        self.log = log
        self.out = ""
        self.err = ""

    @property
    def port(self) -> int:
        return int(re.search(r":(\d+)/mcp$", self.url).group(1))

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            rest, _ = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            rest, _ = self.process.communicate()
        self.out = self.first_line + (rest or "")
        self.err = self.log.read_text()
        return self.process.returncode


def start_gate(home: Path, tmp_path: Path, *args: str, expect_url: bool = True) -> HttpGate:
    """`poppy-tui mcp --http --listen 127.0.0.1:0 ARGS...`, once it prints its endpoint."""
    log = tmp_path / f"mcp-http-{time.monotonic_ns()}.stderr"
    argv = (
        list(args)
        if any(a.startswith("--listen") for a in args)
        else ["--listen", "127.0.0.1:0", *args]
    )
    with open(log, "w") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "poppy_tui", "mcp", "--http", *argv],
            env=subprocess_env(home),
            cwd=str(tmp_path),
            stdout=subprocess.PIPE,
            stderr=errors,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    line = ""
    while time.monotonic() < deadline and not line:
        ready = readable(process.stdout, 0.05)
        if ready:
            line = process.stdout.readline()
            if not line:  # it exited
                break
    found = re.search(r"(https?://\S+/mcp)\b", line)
    gate = HttpGate(process, found.group(1) if found else "", line, log)
    if expect_url and not found:
        code = gate.stop()
        raise AssertionError(f"mcp --http did not start (exit {code}): {gate.out!r} {gate.err!r}")
    return gate


@contextlib.contextmanager
def running_gate(home: Path, tmp_path: Path, *args: str) -> Iterator[HttpGate]:
    gate = start_gate(home, tmp_path, *args)
    try:
        yield gate
    finally:
        gate.stop()


def agent_token(home: Path, name: str, *options: str) -> str:
    """`poppy-tui --home HOME mcp token --agent NAME OPTIONS...`: the token it prints (once)."""
    import io

    from poppy_tui.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--home", str(home), "mcp", "token", "--agent", name, *options])
    assert code == 0, err.getvalue()
    return out.getvalue().strip()


def token_of(home: Path) -> str:
    from poppy_tui.agent.paths import resolve_paths
    from poppy_tui.agent.gate.default_token import read_or_create, token_path

    return read_or_create(token_path(resolve_paths(home).data_dir))


@contextlib.asynccontextmanager
async def http_session(
    url: str, token: str | None, *, verify: Any = True, **session: Any
) -> AsyncIterator[Any]:
    """The MCP SDK's ClientSession over its streamable-HTTP client, with the bearer token;
    `session`: ClientSession's own arguments (client_info, callbacks)."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(
        headers=headers, timeout=httpx2.Timeout(30, read=300), verify=verify
    ) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write, **session) as opened:
                await opened.initialize()
                yield opened


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def raw_post(
    url: str,
    body: Any = None,
    *,
    token: str | None = None,
    headers: dict[str, str] | None = None,
    content: bytes | None = None,
    verify: Any = True,
):
    """One plain HTTP POST (httpx), for what an MCP client would never send."""
    import httpx

    sent = dict(MCP_HEADERS)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    sent.update(headers or {})
    with httpx.Client(timeout=30, verify=verify) as client:
        if content is not None:
            return client.post(url, content=content, headers=sent)
        return client.post(url, json=INITIALIZE if body is None else body, headers=sent)


VERSION = "2025-06-18"


def rpc_answer(response: Any) -> dict:
    """The JSON-RPC message in a JSON or an SSE answer (an httpx2 response)."""
    import json

    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    return json.loads([d for d in data if d][-1])


@contextlib.asynccontextmanager
async def in_process_gate(home, token: str | None = None, **limits):
    """serve_http on 127.0.0.1 in this loop, with small `limits` where a test wants them: (url, the
    Agent, an httpx2 client with `token`, else the default agent's)."""
    import asyncio

    import httpx2

    from poppy_tui.agent.gate.credentials import Credentials
    from poppy_tui.agent.gate.default_token import read_or_create, token_path
    from poppy_tui.agent.paths import resolve_paths
    from poppy_tui.mcp_server.http_gate import parse_listen, serve_http
    from tests.mcp_server.conftest import person_agent

    agent = person_agent(home)
    data_dir = resolve_paths(home).data_dir
    token = token or read_or_create(token_path(data_dir))
    credentials = Credentials(data_dir)
    stopping = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    serving = asyncio.create_task(
        serve_http(
            agent,
            parse_listen("127.0.0.1:0"),
            credentials,
            allowed_hosts=[],
            tls=None,
            started=ready.set_result,
            stopping=stopping,
            **limits,
        )
    )
    try:
        url = await asyncio.wait_for(ready, 30)
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as client:
            yield url, agent, client
    finally:
        stopping.set()
        await asyncio.wait_for(serving, 30)
        await agent.aclose()


async def call(
    client, url: str, session: str, method: str, params: dict | None = None, id: int | None = 2
):
    body = {
        "jsonrpc": "2.0",
        "method": method,
        **({"id": id} if id is not None else {}),
        **({"params": params} if params is not None else {}),
    }
    return await client.post(
        url, json=body, headers={"Mcp-Session-Id": session, "Mcp-Protocol-Version": VERSION}
    )


__all__ = [
    "in_process_gate",
    "call",
    "rpc_answer",
    "start_gate",
    "running_gate",
    "token_of",
    "agent_token",
    "http_session",
    "raw_post",
    "INITIALIZE",
]
