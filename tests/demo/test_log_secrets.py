"""No Session JWT, access or refresh token, password, one-time code or gate token reaches the log
file, at the debug level, where every library's records are kept: a sign-in with a password and
a one-time code, signed-in requests (Session JWTs, access tokens, their refreshes) and failures
that quote them, in this process; and `poppy-tui mcp --http` with its token, in its own.

Beside the file, a handler of the test's own keeps every record unredacted: the secrets are in
play at that level (the test can't pass by logging nothing), and the file has none of them."""

from __future__ import annotations

import logging
import re
from dataclasses import replace

import pytest

from poppy_tui.agent import logfile
from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.demo.accounts.service import AccountsOptions
from poppy_tui.demo.accounts.tokens import TokenStore
from poppy_tui.demo.accounts.users import DEMO_ONE_TIME_CODE, DEMO_PASSWORD, DEMO_USERNAME
from tests.keyring_support import memory_keyring  # noqa: F401 (shared autouse fixture)

JWT = re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")


class Unredacted(logging.Handler):
    """Every record as the program made it, formatted without redaction."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def debug_log(tmp_path, monkeypatch):
    monkeypatch.delenv(logfile.LEVEL_ENV, raising=False)
    root = logging.getLogger()
    level = root.level
    path = logfile.open_log(tmp_path / "data" / "poppy-tui.log", "debug")
    raw = Unredacted()
    root.addHandler(raw)
    yield path, raw
    root.removeHandler(raw)
    logfile.close_log()
    root.setLevel(level)


def logged(path) -> str:
    for handler in logging.getLogger().handlers:
        handler.flush()
    return "".join(p.read_text() for p in sorted(path.parent.glob(path.name + "*")))


async def test_sign_in_and_signed_in_requests_leave_no_secret_in_the_log(
    start, tmp_path, debug_log, monkeypatch
):
    path, raw = debug_log
    issued: list[str] = []
    real_issue = TokenStore.issue

    def issue(self, grant, scopes):  # what the Company hands out, to look for afterwards
        answer = real_issue(self, grant, scopes)
        issued.extend([str(answer["access_token"]), str(answer["refresh_token"])])
        return answer

    monkeypatch.setattr(TokenStore, "issue", issue)
    # 30 s access tokens are inside the refresh margin: every signed-in request refreshes first.
    shop = start(accounts=AccountsOptions(access_token_seconds=30))
    config = replace(Config(), allow_loopback=True, grace_seconds=0.0, request_timeout_seconds=5.0)
    agent = Agent.open(Paths(tmp_path / "config", tmp_path / "data"), config)
    sessions: list[str] = []
    try:
        company = await agent.add_company(shop.base_url)
        flow = await agent.signins.begin(company, "mediated")
        await flow.submit({"username": DEMO_USERNAME, "password": DEMO_PASSWORD})
        await flow.submit_code(DEMO_ONE_TIME_CODE)
        for _ in range(2):
            answer = await agent.call_api(company, "GET", "/api/orders")
            assert answer.status == 200
        # What a careless line of ours, a library's debug line or a failure's message would say.
        access = issued[-2]
        session = agent.sessions.headers(company, "sess_log_test")
        sessions.extend(v for v in session.values() if JWT.fullmatch(v))
        log = logging.getLogger("poppy_tui.agent.test")
        log.debug("sending with headers %r", session)
        logging.getLogger("httpcore2.http11").debug(
            "send_request_headers.started headers=%r",
            [(b"Authorization", f"Bearer {access}".encode()), (b"Host", b"shop")],
        )
        logging.getLogger("authlib").debug("token response %r", {"access_token": access})
        try:
            raise ValueError(f"refused {DEMO_PASSWORD} / {DEMO_ONE_TIME_CODE} / {issued[-1]}")
        except ValueError:
            log.exception("a failure that quotes what it was given")
    finally:
        await agent.aclose()
        agent.store.close()

    assert len(issued) >= 4 and sessions  # signed in, refreshed at least once, Sessions signed
    everything = "\n".join(raw.lines)
    # At debug the secrets were in the records (the program's and the libraries')...
    assert access in everything and sessions[0] in everything and DEMO_PASSWORD in everything
    assert any(line.startswith("DEBUG httpcore2") for line in raw.lines)  # libraries' debug too
    text = logged(path)
    # ...and none is in the file.
    for secret in (*issued, *sessions, DEMO_PASSWORD, DEMO_ONE_TIME_CODE):
        assert secret not in text, f"{secret[:12]}... reached the log"
    assert not JWT.search(text)
    assert "DEBUG httpcore2" in text and "[redacted]" in text
    assert "Traceback (most recent call last)" in text  # the failure, with its traceback


def test_the_gate_token_never_reaches_the_gates_log(tmp_path, monkeypatch):
    import asyncio

    from tests.cli.cli_support import make_home
    from tests.mcp_server.http_support import http_session, raw_post, running_gate, token_of

    home = make_home(tmp_path, monkeypatch, 'key_storage = "file"\nlog_level = "debug"\n')
    token = token_of(home)
    wrong = "Zq" + token[2:]  # one that looks like it, refused

    async def use(url: str) -> None:
        async with http_session(url, token) as session:
            assert (await session.list_tools()).tools

    with running_gate(home, tmp_path) as gate:
        asyncio.run(use(gate.url))
        assert (
            raw_post(
                gate.url, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, token=wrong
            ).status_code
            == 401
        )
    text = logged(home / "data" / "poppy-tui.log")
    assert "DEBUG" in text  # the gate logged at debug (the MCP SDK's and uvicorn's records too)
    assert token not in text and wrong not in text
    assert not JWT.search(text)
