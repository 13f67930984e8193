"""`poppy-tui web` as a real subprocess on 127.0.0.1, a test home with the strict Company (written
from the spec alone: tests/companies/strict_company.py) registered in it, and what a test does as
the person's other processes would: queue an operation through the agent, pair a device."""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import httpx

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import load_config_file
from poppy_tui.agent.paired_devices import DeviceBook, pairing_link, served_page
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status
from tests.cli.cli_support import readable, subprocess_env

START_TIMEOUT_SECONDS = 60.0
COOKIE = "__Host-poppy-device"
CONFIG = 'key_storage = "file"\ngrace_seconds = 60\narm_delay_seconds = 0\nrequest_timeout_seconds = 10\n'


def make_home(root: Path, config: str = CONFIG) -> Path:
    (root / "config").mkdir(parents=True)
    (root / "config" / "config.toml").write_text(config)
    return root


def register(home: Path, base_url: str) -> None:
    from poppy_tui.cli.main import main

    assert main(["--home", str(home), "companies", "add", base_url]) == 0


class WebServer:
    """A running `poppy-tui web`: its URL; what it printed is read after stop()."""

    def __init__(self, process: subprocess.Popen, url: str, first_line: str, log: Path, home: Path):
        self.process = process
        self.url = url
        self.first_line = first_line
        self.log = log
        self.home = home
        self.out = ""
        self.err = ""
        self.local = url  # where it listens, when browsers reach it elsewhere (--public-url)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    @property
    def host(self) -> str:
        return self.url.split("://", 1)[1]

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


def start_web(home: Path, logs: Path, *args: str, expect_url: bool = True) -> WebServer:
    log = logs / f"web-{time.monotonic_ns()}.stderr"
    argv = (
        list(args)
        if any(a.startswith("--listen") for a in args)
        else ["--listen", "127.0.0.1:0", *args]
    )
    with open(log, "w") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "poppy_tui", "web", *argv],
            env=subprocess_env(home),
            cwd=str(logs),
            stdout=subprocess.PIPE,
            stderr=errors,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    line = ""
    while time.monotonic() < deadline and not line:
        if readable(process.stdout, 0.05):
            line = process.stdout.readline()
            if not line:
                break
    found = re.search(r"at (https?://[^\s]+)(?: \(listening on ([^)]+)\))?$", line.strip())
    server = WebServer(process, found.group(1) if found else "", line, log, home)
    server.local = f"http://{found.group(2)}" if found and found.group(2) else server.url
    if expect_url and not found:
        code = server.stop()
        raise AssertionError(
            f"poppy-tui web did not start (exit {code}): {server.out!r} {server.err!r}"
        )
    return server


@contextlib.contextmanager
def running_web(home: Path, logs: Path, *args: str) -> Iterator[WebServer]:
    server = start_web(home, logs, *args)
    try:
        yield server
    finally:
        server.stop()


def new_link(home: Path, seconds: float | None = None) -> str:
    data_dir = resolve_paths(home).data_dir
    served = served_page(data_dir)
    assert served is not None, "poppy-tui web announced no address"
    with DeviceBook.open(data_dir) as book:
        pairing = book.new_pairing() if seconds is None else book.new_pairing(seconds)
    return pairing_link(served.url, pairing.code)


class Browserless:
    """An HTTP client acting as a paired browser would (its own Origin on every POST, the device
    cookie sent by hand: httpx's cookie jar keeps a Secure cookie off plain http, as a browser
    keeps it on for loopback)."""

    def __init__(self, server: WebServer) -> None:
        self.server = server
        self.client = httpx.Client(base_url=server.url, timeout=30, follow_redirects=False)
        self.credential: str | None = None

    def close(self) -> None:
        self.client.close()

    def headers(self, **extra: str) -> dict[str, str]:
        headers = {"origin": self.server.url}
        if self.credential:
            headers["cookie"] = f"{COOKIE}={self.credential}"
        headers.update(extra)
        return headers

    def get(self, path: str, **headers: str) -> httpx.Response:
        return self.client.get(path, headers=self.headers(**headers))

    def post(self, path: str, data: dict[str, Any] | None = None, **headers: str) -> httpx.Response:
        return self.client.post(path, data=data or {}, headers=self.headers(**headers))

    def pair(self, name: str = "test phone") -> httpx.Response:
        link = new_link(self.server.home)
        path = link.split(self.server.url, 1)[1]
        assert self.client.get(path).status_code == 200
        answer = self.client.post(path, data={"name": name}, headers={"origin": self.server.url})
        assert answer.status_code == 303, answer.text
        self.credential = device_cookie(answer)["value"]
        return answer

    def csrf(self, path: str = "/") -> str:
        page = self.get(path)
        found = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
        assert found, page.text[:500]
        return found.group(1)


def device_cookie(answer: httpx.Response) -> dict[str, Any]:
    """The Set-Cookie of the device credential, parsed: value and attributes (lower case)."""
    for header in answer.headers.get_list("set-cookie"):
        name, _, rest = header.partition("=")
        if name.strip() == COOKIE:
            value, *attributes = rest.split(";")
            found: dict[str, Any] = {"value": value.strip()}
            for attribute in attributes:
                key, _, val = attribute.strip().partition("=")
                found[key.lower()] = val or True
            return found
    raise AssertionError(f"no {COOKIE} cookie set: {answer.headers}")


def person_agent(home: Path, **config: Any) -> Agent:
    paths = resolve_paths(home)
    return Agent.open(paths, replace(load_config_file(paths.config_file), **config))


def queue(home: Path, path: str, body: Any = None) -> int:
    """An agent's request to the strict Company (the first known Company) that returns an
    operation: its row, queued for the person."""

    async def ask() -> int:
        agent = person_agent(home)
        try:
            company = agent.store.list_companies()[0]
            result = await agent.call_api(company, "POST", path, body)
            assert result.outcome == "operation", result
            return int(result.operation_row)
        finally:
            await agent.aclose()

    return asyncio.run(ask())


def status_of(home: Path, row: int) -> Status:
    from poppy_tui.agent.store import Store

    with Store.open(resolve_paths(home).database) as store:
        return store.get_operation(row).status


def wait_until(condition: Any, what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


_bookings = iter(range(100, 100_000))


def new_booking(company: Any, trip: str = "Faro, 2 nights") -> str:
    """A booking of its own at the strict Company (its cancel has an operation_id of its own)."""
    booking = f"bk_{next(_bookings)}"
    company.state.bookings[booking] = {
        "id": booking,
        "trip": trip,
        "status": "confirmed",
        "date": "2026-11-30",
    }
    return booking


def queue_cancel(home: Path, company: Any, trip: str = "Faro, 2 nights") -> int:
    return queue(home, f"/bookings/{new_booking(company, trip)}/cancel")
