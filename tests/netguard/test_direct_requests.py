"""agent/net/http.request sends make_client's requests through the agent's own HTTP/1.1 pool
(agent/net/http11.py) instead of httpx's client; what the client promised still holds there: its
default headers and timeouts, no redirect followed, no cookie kept. With a proxy from the
environment every request takes httpx's whole path (the name check is a request hook there)."""

from __future__ import annotations

import httpx
import pytest

from poppy_tui.agent.net.http import USER_AGENT, HttpAnswer, make_client, request

from tests.netguard.test_guarded_stream import RawHttpServer


def _header(raw_request: bytes, name: bytes) -> bytes | None:
    for line in raw_request.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip()
    return None


async def _noop_hook(request: httpx.Request) -> None:
    pass


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "through httpx's client"])
async def test_a_cookie_from_a_company_is_never_sent_back(direct):
    async with RawHttpServer(answer_headers=b"Set-Cookie: track=abc123; Path=/\r\n") as server:
        async with make_client(5.0) as client:
            if not direct:
                client.event_hooks = {"request": [_noop_hook], "response": []}
            answers = [await request(client, "GET", f"{server.base_url}/{n}") for n in range(2)]
    assert all(isinstance(a, HttpAnswer) and a.status == 200 for a in answers)
    # The Session JWT is how a Company knows the agent: a cookie would link its Sessions.
    assert [_header(r, b"cookie") for r in server.requests] == [None, None]
    assert not client.cookies


async def test_the_direct_path_sends_the_clients_headers_with_the_callers():
    async with RawHttpServer() as server:
        async with make_client(5.0) as client:
            assert client.direct is not None  # no proxy here: requests go through the own pool
            await request(client, "POST", f"{server.base_url}/x", content=b"{}", params={"b": "2"},
                          headers={"Accept": "application/json", "Poppy-Version": "0.4"})
    sent = server.requests[0]
    assert sent.startswith(b"POST /x?b=2 HTTP/1.1\r\n")
    assert _header(sent, b"user-agent") == USER_AGENT.encode()
    assert _header(sent, b"accept") == b"application/json"  # the caller's, not the default */*
    assert _header(sent, b"poppy-version") == b"0.4"
    assert _header(sent, b"host") == server.base_url.split("//", 1)[1].encode()
    assert _header(sent, b"content-length") == b"2" and sent.endswith(b"\r\n\r\n{}")


async def test_a_redirect_is_returned_not_followed_on_the_direct_path():
    async with RawHttpServer() as server:
        server.status_line = b"HTTP/1.1 307 Temporary Redirect"
        server.answer_headers = f"Location: {server.base_url}/elsewhere\r\n".encode()
        async with make_client(5.0) as client:
            answer = await request(client, "POST", f"{server.base_url}/approve", content=b"{}")
    assert isinstance(answer, HttpAnswer) and answer.status == 307
    assert answer.headers["location"].endswith("/elsewhere")
    assert len(server.requests) == 1  # an approval never follows a redirect


def test_with_a_proxy_configured_every_request_takes_httpxs_whole_path(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    client = make_client(5.0, allow_loopback=False)
    assert client.direct is None and client.event_hooks["request"]


async def test_a_url_parsed_once_is_shared_and_its_params_are_still_each_requests_own(monkeypatch):
    from poppy_tui.agent.net import http

    monkeypatch.setattr(http, "_URLS", {})
    monkeypatch.setattr(http, "_URLS_KEPT", 2)
    async with RawHttpServer() as server:
        async with make_client(5.0) as client:
            url = f"{server.base_url}/same"
            await request(client, "POST", url, content=b"{}", params={"n": "1"})
            first = http._URLS[url]
            await request(client, "POST", url, content=b"{}", params={"n": "2"})
            assert http._URLS[url] is first  # parsed once
            await request(client, "GET", f"{server.base_url}/other")
            await request(client, "GET", f"{server.base_url}/third")  # over the bound: started again
            assert set(http._URLS) == {f"{server.base_url}/third"}
    lines = [r.split(b"\r\n", 1)[0] for r in server.requests]
    assert lines == [b"POST /same?n=1 HTTP/1.1", b"POST /same?n=2 HTTP/1.1", b"GET /other HTTP/1.1",
                     b"GET /third HTTP/1.1"]
