"""`poppy-tui --demo`: its requests, its separate home, and the whole run in a real terminal."""

from __future__ import annotations

import json
import re
import time

import pytest

from cli_support import Terminal, run_process
from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.cli.demo import demo_config, demo_paths, seed
from poppy_tui.cli.exit_codes import Exit
from tests.waiting import wait_until


async def test_demo_requests_leave_one_operation_waiting_per_interface(home, company, capsys):
    paths = demo_paths(resolve_paths(home))
    agent = Agent.open(paths, demo_config(Config()))
    try:
        waiting = await seed(agent, company.base_url)
        rows = agent.store.list_operations(newest_first=False)
        await agent.settle_resource_reads(20)
        reads = [agent.store.resource_read(row.id) for row in rows]
    finally:
        await agent.aclose()
    assert len(waiting) == 3
    # What each operation changes, read before the decision: the order by the API's GET, the
    # subscription by the MCP server's read tool; a conversation names no API resource.
    assert [read.ok for read in reads] == [True, True, False], [r.problem for r in reads]
    assert (
        reads[0].source == f"GET {company.base_url}/api/orders/ord_7Hk2"
        and reads[0].body["order_id"] == "ord_7Hk2"
    )
    assert (
        reads[1].source == "MCP get_subscription(subscription_id=sub_6Tc1)"
        and reads[1].body["status"] == "active"
    )
    assert reads[2].source == ""
    assert [row.id for row in rows] == waiting
    assert [row.interface for row in rows] == ["api", "mcp", "conversation"]
    assert all(row.status == Status.PENDING for row in rows)
    assert rows[0].operation_id == "exc_5Rt2"
    for row in rows:
        assert company.state.performed(row.operation_id) == 0
    err = capsys.readouterr().err
    assert err.count("waits for your approval") == 3


def test_demo_home_is_apart_from_the_real_one(tmp_path):
    real = resolve_paths(tmp_path)
    demo = demo_paths(real)
    assert demo.database == tmp_path / "data" / "demo" / "data" / "poppy.db"
    assert demo.database != real.database
    assert demo.key_file != real.key_file


def test_demo_config_keeps_the_look_but_not_the_companies():
    mine = Config(
        theme="textual-light", companies=("shop.example",), key_storage="keyring", grace_seconds=9
    )
    demo = demo_config(mine)
    assert (demo.theme, demo.grace_seconds) == ("textual-light", 9)
    assert demo.companies == ()
    assert demo.key_storage == "file"


def test_demo_needs_a_terminal_and_starts_nothing_without_one(home):
    done = run_process("--demo", home=home)
    assert done.code == Exit.USAGE
    assert "needs a terminal" in done.err
    assert not (home / "data" / "demo").exists()


def test_demo_rejects_an_unknown_fault(home):
    done = run_process("--demo", "--faults", "slow=1,gremlins", home=home)
    assert done.code == Exit.USAGE
    assert "--faults: unknown fault 'gremlins'" in done.err
    assert "Traceback" not in done.err


@pytest.mark.slow
def test_demo_in_a_real_terminal(home):
    """The newcomer's minute with no browser: plain --demo asks to sign in, Enter switches to the
    terminal (email, password unseen, one-time code), then the operations wait in the inbox.
    Mediated Sign-In doesn't grant the demo's bookings scope, so the fitting move says so."""
    from poppy_tui.demo.accounts.users import DEMO_ONE_TIME_CODE, DEMO_PASSWORD, DEMO_USERNAME

    started = time.monotonic()
    terminal = Terminal("--demo", home=home, columns=200)
    try:
        terminal.read_until(r"No browser here\? Press Enter")
        terminal.press(b"\r")
        # A mistyped password gets a one-line error and another try.
        terminal.read_until(r"Email: ")
        terminal.press(DEMO_USERNAME.encode() + b"\r")
        terminal.read_until(r"Password \(not shown\): ")
        terminal.press(b"wrong-" + DEMO_PASSWORD.encode() + b"\r")
        terminal.read_until(r"Try again\.")
        terminal.read_until(r"Email: ", after="Try again.")
        terminal.press(DEMO_USERNAME.encode() + b"\r")
        terminal.read_until(r"Password \(not shown\): ", after="Try again.")
        terminal.press(DEMO_PASSWORD.encode() + b"\r")
        terminal.read_until(r"One-time code \(not shown\): ")
        terminal.press(DEMO_ONE_TIME_CODE.encode() + b"\r")
        terminal.read_until(r"signed in \(mediated\)")
        terminal.read_until(r"2 operations wait")
        terminal.read_until(r"Manzanita Outfitters", after="Opening the inbox")
        assert time.monotonic() - started < 60  # "the whole flow in under a minute"
        # The CLI beside the demo (README's two-window recipe) is signed in as the same account.
        beside = run_process(
            "companies", "list", "--json", home=home / "data" / "demo", POPPY_TUI_KEY_STORAGE="file"
        )
        [listed] = json.loads(beside.out)["companies"]
        assert (listed["signed_in"]["kind"], listed["signed_in"]["scopes"]) == (
            "mediated",
            ["poppy:read", "poppy:write"],
        )
        assert terminal.quit() == Exit.OK, terminal.text[-3000:]
    finally:
        terminal.close()
    text = terminal.text
    # The password shows once, in the banner that gives it; the typed one is never echoed back.
    assert text.count(DEMO_PASSWORD) == 1 and "wrong-" not in text
    assert "Traceback" not in text
    assert "mediated sign-in doesn't grant bookings" in text
    assert "needs more access: scopes poppy:write bookings" in text
    demo = demo_paths(resolve_paths(home))
    with Store.open(demo.database) as store:
        rows = store.list_operations(newest_first=False)
        assert [row.interface for row in rows] == ["api", "mcp"]
        assert all(store.get_operation(row.id).account_owned for row in rows)


@pytest.mark.slow
def test_demo_without_accounts_in_a_real_terminal(home):
    """--demo --no-accounts: the Company starts, three operations wait signed out, the inbox shows
    them, quitting stops the Company. Run in a pseudo-terminal, as a person would run it."""
    started = time.monotonic()
    terminal = Terminal("--demo", "--no-accounts", home=home)
    try:
        terminal.read_until(r"3 operations wait")
        # The Company's name after the last note can only be the TUI's inbox listing the operations.
        terminal.read_until(r"Manzanita Outfitters", after="Opening the inbox")
        assert time.monotonic() - started < 60  # "the whole flow in under a minute"
        assert terminal.quit() == Exit.OK, terminal.text[-3000:]
    finally:
        terminal.close()
    text = terminal.text
    assert "Demo Company Manzanita Outfitters is running at http://127.0.0.1:" in text
    assert "Demo Company stopped" in text
    assert "Sign in first" not in text and "has accounts" not in text
    port = re.search(r"running at http://127\.0\.0\.1:(\d+)", text).group(1)
    # The Company really stopped: nothing listens on its port any more.
    import socket

    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", int(port))) != 0
    # Demo data went to the demo home only.
    demo = demo_paths(resolve_paths(home))
    with Store.open(demo.database) as store:
        assert [row.interface for row in store.list_operations(newest_first=False)] == [
            "api",
            "mcp",
            "conversation",
        ]
    assert not resolve_paths(home).database.exists()
    assert json.loads(run_process("pending", "--json", home=home).out) == {"operations": []}


@pytest.mark.slow
def test_plain_poppy_tui_opens_the_inbox_and_adds_listed_companies(home, company):
    (home / "config" / "config.toml").write_text(
        f'key_storage = "file"\ncompanies = ["{company.base_url}", "http://127.0.0.1:9"]\n'
    )
    terminal = Terminal(home=home)
    try:
        terminal.read_until(r"added Manzanita Outfitters")
        terminal.read_until(r"Inbox", after="warning: could not add")
        assert terminal.quit() == Exit.OK, terminal.text[-3000:]
    finally:
        terminal.close()
    assert "warning: could not add http://127.0.0.1:9" in terminal.text
    listed = json.loads(run_process("companies", "list", "--json", home=home).out)["companies"]
    assert [c["base_url"] for c in listed] == [company.base_url]


async def test_demo_accounts_know_the_demo_agent_by_its_cimd(home, start):
    """--demo --accounts: the Company verifies the demo agent's client assertion with the key
    from the CIMD the agent serves on loopback, and the banner gives the demo user's credentials."""
    import httpx

    from poppy_tui.cli.demo import accounts_banner, demo_accounts
    from poppy_tui.demo.accounts.users import DEMO_PASSWORD, DEMO_USERNAME
    from poppy_tui.protocol import conventions as c

    company = start(accounts=demo_accounts())
    agent = Agent.open(demo_paths(resolve_paths(home)), demo_config(Config()))
    try:
        assertion = agent.identity.client_assertion(company.issuer)
        async with httpx.AsyncClient() as http:
            started = await http.post(
                company.accounts.url("/device"),
                data={
                    "client_assertion_type": c.CLIENT_ASSERTION_TYPE,
                    "client_assertion": assertion,
                },
            )
        assert started.status_code == 200, started.text
        assert started.json()["user_code"]
    finally:
        await agent.aclose()
    banner = "\n".join(accounts_banner())
    assert DEMO_USERNAME in banner and DEMO_PASSWORD in banner


async def test_demo_with_accounts_signs_in_first_then_three_operations_wait(
    home, capsys, monkeypatch, start
):
    """--demo --accounts: Device Sign-In in the terminal (the person allows on the demo's
    page), then the three requests, signed in, each leave an account operation waiting."""
    import asyncio

    import httpx
    import keyring

    from poppy_tui.agent.keys import KEY_STORAGE_ENV
    from poppy_tui.cli.demo import demo_accounts
    from poppy_tui.demo.accounts.users import DEMO_PASSWORD, DEMO_USERNAME
    from tests.keyring_support import MemoryKeyring

    monkeypatch.delenv(KEY_STORAGE_ENV, raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    from dataclasses import replace

    shop = start(accounts=replace(demo_accounts(), device_interval=1))
    agent = Agent.open(demo_paths(resolve_paths(home)), demo_config(Config()))

    async def the_person() -> None:
        async with httpx.AsyncClient() as browser:
            devices = await wait_until(
                shop.accounts.tokens.devices, timeout=30, describe="a device sign-in started"
            )
            code = devices[0].user_code
            await browser.post(
                shop.accounts.url("/device/verify"),
                data={
                    "user_code": code,
                    "username": DEMO_USERNAME,
                    "password": DEMO_PASSWORD,
                    "decision": "allow",
                },
            )

    try:
        person = asyncio.ensure_future(the_person())
        waiting = await seed(agent, shop.base_url, sign_in=True)
        await person
        rows = agent.store.list_operations(newest_first=False)
        owned = [agent.store.get_operation(row.id).account_owned for row in rows]
        await agent.settle_resource_reads(20)
        reads = [agent.store.resource_read(row.id) for row in rows]
    finally:
        await agent.aclose()
        keyring.set_keyring(previous)
    assert len(waiting) == 3
    assert owned == [True, True, True]
    # Read with the account's Bearer (the demo's reads need poppy:read).
    assert [read.ok for read in reads[:2]] == [True, True], [r.problem for r in reads]
    err = capsys.readouterr().err
    assert "signed in (device)" in err and err.count("waits for your approval") == 3


@pytest.mark.slow
def test_demo_signs_in_with_a_browser_in_a_real_terminal(home):
    """Plain --demo in a pseudo-terminal: the banner gives the demo user, Device Sign-In shows
    the link and code, the person allows in a browser, then three operations wait."""
    import httpx

    from poppy_tui.demo.accounts.users import DEMO_PASSWORD, DEMO_USERNAME

    terminal = Terminal("--demo", home=home, columns=200)
    try:
        terminal.read_until(r"confirm the code")
        text = terminal.text
        assert DEMO_USERNAME in text and DEMO_PASSWORD in text
        link = re.search(
            r"Open (http://127\.0\.0\.1:\d+/auth/device/verify\?user_code=[A-Z0-9%-]+)", text
        ).group(1)
        code = re.search(r"confirm the code ([A-Z]{4}-[A-Z]{4})", text).group(1)
        with httpx.Client() as browser:
            assert browser.get(link).status_code == 200  # opening approves nothing
            allowed = browser.post(
                link.split("?")[0],
                data={
                    "user_code": code,
                    "username": DEMO_USERNAME,
                    "password": DEMO_PASSWORD,
                    "decision": "allow",
                },
            )
            assert allowed.status_code == 200
        terminal.read_until(r"3 operations wait")
        terminal.read_until(r"Manzanita Outfitters", after="Opening the inbox")
        assert terminal.quit() == Exit.OK, terminal.text[-3000:]
    finally:
        terminal.close()
    assert "signed in (device)" in terminal.text
    assert "No browser here? Press Enter" in terminal.text


def _screen(text: str, columns: int, lines: int) -> list[str]:
    """The rows a terminal of this size shows at the end of `text`: long lines wrap."""
    rows: list[str] = []
    for line in text.replace("\r", "").split("\n"):
        rows.extend(line[i : i + columns] for i in range(0, max(len(line), 1), columns))
    return rows[-lines:]


@pytest.mark.slow
@pytest.mark.parametrize("lines", [24, 50])
def test_the_demo_sign_in_prompt_keeps_credentials_link_and_code_on_screen(home, lines):
    """At 80x24 the QR code (about 17 lines) pushed the credentials and the link off the screen
    while the prompt waited, and the banner's long lines wrapped mid-word. Now every line but the
    path fits 80 columns, and the QR code shows only where the terminal has room for it too."""
    from poppy_tui.demo.accounts.users import DEMO_ONE_TIME_CODE, DEMO_PASSWORD, DEMO_USERNAME

    terminal = Terminal("--demo", home=home, columns=80, lines=lines)
    try:
        terminal.read_until(r"Waiting for you to confirm")
        text = terminal.text
    finally:
        terminal.close()
    prompt = text[text.index("Demo Company Manzanita Outfitters") :]
    too_long = [
        line
        for line in prompt.replace("\r", "").split("\n")
        if len(line) > 80 and "Demo data:" not in line
    ]
    assert not too_long, too_long
    screen = "\n".join(_screen(prompt, 80, lines))
    for needed in (
        DEMO_USERNAME,
        DEMO_PASSWORD,
        DEMO_ONE_TIME_CODE,
        "Open http://127.0.0.1:",
        "confirm the code",
        "No browser here? Press Enter",
        "Waiting for you to confirm",
    ):
        assert needed in screen, (needed, screen)
    qr_shown = "█" in prompt
    assert qr_shown == (lines == 50)
    if qr_shown:  # the link and code come after it, next to the prompt
        assert prompt.rindex("█") < prompt.index("Open http://")


@pytest.mark.parametrize("faults", [None, "expired"])
async def test_what_the_demo_says_before_the_tui_fits_80_columns(home, capsys, start, faults):
    """Every line the demo prints before the TUI fits 80 columns, with and without a fault; an
    operation that arrives already expired is said to be in History, not to wait."""
    from poppy_tui.cli.demo import waiting_line

    shop = start(faults)
    agent = Agent.open(demo_paths(resolve_paths(home)), demo_config(Config()))
    try:
        waiting = await seed(agent, shop.base_url)
    finally:
        await agent.aclose()
    err = capsys.readouterr().err + waiting_line(len(waiting)) + "\n"
    too_long = [line for line in err.splitlines() if len(line) > 80]
    assert not too_long, too_long
    if faults == "expired":
        assert waiting == [] and "waits for your approval" not in err
        assert err.count("arrived already expired (it is in History)") == 3
        assert "No operation waits" in err and "0 operations" not in err
    else:
        assert len(waiting) == 3 and err.count("waits for your approval") == 3


def test_the_waiting_line_speaks_of_zero_one_and_many():
    from poppy_tui.cli.demo import waiting_line

    assert waiting_line(0).startswith("No operation waits")
    assert waiting_line(1).startswith("1 operation waits") and "review it," in waiting_line(1)
    assert waiting_line(3).startswith("3 operations wait")
