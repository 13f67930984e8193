"""Fault modes, and the server's own API (start, serve, stop, quiet)."""

from __future__ import annotations

import logging
import re
import socket
import time
from datetime import datetime

import httpx
import pytest

from poppy_tui.demo import Faults, serve_company
from poppy_tui.demo.testing import AgentSession, company as company_cm
from tests.clock_waits import until_past_blocking
from tests.waiting import wait_until_blocking

from .helpers import SPEC_BODY, SPEC_PATH, propose, send_approved


def test_parse_faults():
    faults = Faults.parse("slow=1.5,drop_after_perform=1,busy=3,expired,mismatch,hostile")
    assert faults == Faults(
        slow=1.5, drop_after_perform=1, busy=3, expired=True, mismatch=True, hostile=True
    )
    assert Faults.parse("") == Faults() and Faults.parse(None) == Faults()
    assert Faults.parse("busy, perform-seconds=0.5 expiry=3") == Faults(
        busy=1, perform_seconds=0.5, expiry=3.0
    )
    assert Faults.parse(faults.describe()) == faults
    for bad in ("nope", "slow", "busy=-1", "expired=maybe", "slow=fast"):
        with pytest.raises(ValueError):  # noqa: PT011 - any refusal of a bad fault spec will do
            Faults.parse(bad)


def test_drop_after_perform_looks_like_a_dropped_connection(start):
    company = start("drop_after_perform=1")
    agent = AgentSession.at(company)
    with httpx.Client(base_url=company.base_url) as http:
        operation = propose(http, agent)
        with pytest.raises(httpx.TransportError):  # not an HTTP status: the outcome is unknown
            send_approved(http, agent, operation)
        assert company.state.performed("exc_5Rt2") == 1
        # The agent finds out: from the order, or by sending the same approval again.
        order = http.get("/api/orders/ord_7Hk2", headers=agent.headers()).json()
        assert order["items"][0]["exchange"]["operation_id"] == "exc_5Rt2"
        retry = send_approved(http, agent, operation)
        assert retry.status_code == 201 and retry.json()["operation_id"] == "exc_5Rt2"
    assert company.state.performed("exc_5Rt2") == 1


def test_busy_gives_503_bursts_with_retry_after_on_approvals_only(start):
    company = start("busy=2")
    agent = AgentSession.at(company)
    with httpx.Client(base_url=company.base_url) as http:
        operation = propose(http, agent)  # requests without an approval aren't affected
        for _ in range(2):
            busy = send_approved(http, agent, operation)
            assert busy.status_code == 503 and busy.headers["Retry-After"] == "1"
        assert company.state.performed("exc_5Rt2") == 0
        assert send_approved(http, agent, operation).status_code == 201


def test_slow(start):
    company = start("slow=0.4")
    agent = AgentSession.at(company)
    started = time.monotonic()
    assert httpx.get(company.base_url + "/api/orders", headers=agent.headers()).status_code == 200
    assert time.monotonic() - started >= 0.4


def test_short_expiry(start):
    company = start("expiry=1")
    agent = AgentSession.at(company)
    with httpx.Client(base_url=company.base_url) as http:
        operation = propose(http, agent)
        until_past_blocking(datetime.fromisoformat(operation["expires_at"]))
        assert send_approved(http, agent, operation).status_code == 403
    assert company.state.performed("exc_5Rt2") == 0


def test_expired_operations_can_never_be_approved(start):
    company = start("expired")
    agent = AgentSession.at(company)
    with httpx.Client(base_url=company.base_url) as http:
        operation = propose(http, agent)
        from poppy_tui.protocol.operation import parse_operation
        from poppy_tui.protocol.timestamps import utcnow

        assert parse_operation(operation).expires_at < utcnow()
        assert send_approved(http, agent, operation).status_code == 403
    assert company.state.performed("exc_5Rt2") == 0


def test_mismatch_summary_disagrees_with_terms(start):
    company = start("mismatch")
    agent = AgentSession.at(company)
    with httpx.Client(base_url=company.base_url) as http:
        operation = propose(http, agent)
        assert operation["terms"]["price_difference"]["amount"] == "70.00"
        assert "$7.00 more" in operation["summary"] and "$70.00" not in operation["summary"]
        # The Company still performs what the revision's terms say.
        assert send_approved(http, agent, operation).json()["price_difference"]["amount"] == "70.00"


def test_hostile_summaries(start):
    company = start("hostile")
    agent = AgentSession.at(company)
    with httpx.Client(base_url=company.base_url) as http:
        summary = propose(http, agent)["summary"]
    for needle in (
        "\x1b[",
        "\x1b]8;;",
        "\x1b]52;",
        "[@click=app.quit]",
        "\u202e",
        "](https://",
        "![",
        "<img",
        "<script>",
        "\x9b",
        "\r",
    ):
        assert needle in summary, repr(needle)
    assert "Stormline Insulated Jacket (M), for $70.00 more" in summary


def test_testing_company_context_manager_and_perform_counts():
    with company_cm("busy=1", expiry_seconds=60) as running:
        assert running.faults.busy == 1 and running.desk.expiry_seconds == 60
        assert httpx.get(running.discovery_url).json()["organization"]["domain"] == running.domain
        base = running.base_url
    with pytest.raises(httpx.ConnectError):
        httpx.get(base + "/.well-known/poppy.json", timeout=2)


async def test_serve_company_in_the_running_loop():
    async with serve_company(Faults.parse("perform_seconds=0")) as running:
        agent = AgentSession.at(running)
        async with httpx.AsyncClient(base_url=running.base_url) as client:
            assert (await client.get("/api/orders", headers=agent.headers())).status_code == 200
            response = await client.post(SPEC_PATH, json=SPEC_BODY, headers=agent.headers())
            assert response.json()["operation"]["operation_id"] == "exc_5Rt2"


def test_fixed_port(start):
    probe = start()
    port = probe.port
    probe.stop()

    def nothing_listens() -> bool:
        with socket.socket() as knock:
            return knock.connect_ex(("127.0.0.1", port)) != 0

    wait_until_blocking(nothing_listens, describe=f"port {port} still answers after stop()")
    company = start(port=port)
    assert company.base_url == f"http://127.0.0.1:{port}"
    # And it is the Company that answers there, not only a URL that names the port.
    document = httpx.get(company.discovery_url, timeout=10).json()
    assert document["organization"]["domain"] == company.domain == f"127.0.0.1:{port}"


def test_nothing_reaches_the_terminal(start, capfd):
    root = logging.getLogger()
    handlers = list(root.handlers)
    company = start("drop_after_perform=1")
    agent = AgentSession.at(company)
    with httpx.Client(base_url=company.base_url) as http:
        operation = propose(http, agent)
        with pytest.raises(httpx.TransportError):
            send_approved(http, agent, operation)
    company.stop()
    out, err = capfd.readouterr()
    assert out == "" and not re.search(r"Exception|Traceback|INFO|ERROR", err), err
    assert root.handlers == handlers
