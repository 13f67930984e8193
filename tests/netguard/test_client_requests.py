"""What make_client's client promises for agent/net/http.request: its default headers with the
caller's, no redirect followed, no cookie kept (with or without event hooks in the way). With a
proxy from the environment the name check runs as a request hook."""

from __future__ import annotations

import httpx2
import pytest

from poppy_tui.agent.net.http import USER_AGENT, HttpAnswer, make_client, request

from tests.netguard.test_guarded_stream import RawHttpServer


def _header(raw_request: bytes, name: bytes) -> bytes | None:
    for line in raw_request.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip()
    return None


async def _noop_hook(request: httpx2.Request) -> None:
    pass


@pytest.mark.parametrize("hooked", [False, True], ids=["plain", "with a request hook"])
async def test_a_cookie_from_a_company_is_never_sent_back(hooked):
    async with RawHttpServer(answer_headers=b"Set-Cookie: track=abc123; Path=/\r\n") as server:
        async with make_client(5.0) as client:
            if hooked:
                client.event_hooks = {"request": [_noop_hook], "response": []}
            answers = [await request(client, "GET", f"{server.base_url}/{n}") for n in range(2)]
    assert all(isinstance(a, HttpAnswer) and a.status == 200 for a in answers)
    # The Session JWT is how a Company knows the agent: a cookie would link its Sessions.
    assert [_header(r, b"cookie") for r in server.requests] == [None, None]
    assert not client.cookies


async def test_the_clients_headers_are_sent_with_the_callers():
    async with RawHttpServer() as server:
        async with make_client(5.0) as client:
            await request(
                client,
                "POST",
                f"{server.base_url}/x",
                content=b"{}",
                params={"b": "2"},
                headers={"Accept": "application/json", "Poppy-Version": "0.4"},
            )
    sent = server.requests[0]
    assert sent.startswith(b"POST /x?b=2 HTTP/1.1\r\n")
    assert _header(sent, b"user-agent") == USER_AGENT.encode()
    assert _header(sent, b"accept") == b"application/json"  # the caller's, not the default */*
    assert _header(sent, b"poppy-version") == b"0.4"
    assert _header(sent, b"host") == server.base_url.split("//", 1)[1].encode()
    assert _header(sent, b"content-length") == b"2" and sent.endswith(b"\r\n\r\n{}")


async def test_a_redirect_is_returned_not_followed():
    async with RawHttpServer() as server:
        server.status_line = b"HTTP/1.1 307 Temporary Redirect"
        server.answer_headers = f"Location: {server.base_url}/elsewhere\r\n".encode()
        async with make_client(5.0) as client:
            answer = await request(client, "POST", f"{server.base_url}/approve", content=b"{}")
    assert isinstance(answer, HttpAnswer) and answer.status == 307
    assert answer.headers["location"].endswith("/elsewhere")
    assert len(server.requests) == 1  # an approval never follows a redirect


def test_with_a_proxy_configured_the_name_is_checked_by_a_request_hook(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert make_client(5.0, allow_loopback=False).event_hooks["request"]
    monkeypatch.delenv("HTTPS_PROXY")
    assert not make_client(5.0, allow_loopback=False).event_hooks["request"]
