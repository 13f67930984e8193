"""The development identity's publisher on 127.0.0.1: idle connections are closed and never lock a
Company out, and a port held by another program is used only when it serves this home's own key."""

from __future__ import annotations

import socket

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.identity import load_identity
from poppy_tui.agent.identity import publisher
from poppy_tui.agent.identity.settings import (
    development_settings,
    free_loopback_port,
    read_settings,
    write_settings,
)
from poppy_tui.agent.paths import Paths
from poppy_tui.protocol.client_metadata import jwks_document
from tests.companies.port_squatter import PortSquatter as Hostile

DOCUMENTS = {"/agent.json": {"client_id": "x"}, "/jwks.json": {"keys": []}}


def _fetch(port: int, path: str = "/jwks.json") -> httpx.Response:
    with httpx.Client(trust_env=False, timeout=5) as client:
        return client.get(f"http://127.0.0.1:{port}{path}")


def _idle_connection(port: int, partial: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    if partial:
        sock.sendall(partial)
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    """Blocks until the server closes the connection (or this side's 10 s timeout)."""
    try:
        return sock.recv(1) == b""
    except (TimeoutError, ConnectionResetError):
        return False


@pytest.fixture
def fresh_port():
    port = free_loopback_port()
    yield port
    publisher.stop(port)


def test_many_idle_connections_do_not_keep_a_company_out(fresh_port):
    server = publisher.serve(fresh_port, DOCUMENTS, idle_timeout_seconds=30.0, max_connections=8)
    idle = [_idle_connection(fresh_port) for _ in range(40)]
    idle += [
        _idle_connection(fresh_port, b"GET /jwks.json HTTP/1.1\r\nHost: x\r\n") for _ in range(10)
    ]
    try:
        answer = _fetch(fresh_port)  # long before any idle one times out
        assert answer.status_code == 200 and answer.json() == {"keys": []}
        assert len(server.connections) <= 8 and server.closed_idle >= 42
        assert _closed_by_server(idle[0])  # the oldest made room
    finally:
        for sock in idle:
            sock.close()


def test_an_idle_or_trickling_connection_is_closed_after_the_timeout(fresh_port):
    server = publisher.serve(fresh_port, DOCUMENTS, idle_timeout_seconds=0.3, max_connections=8)
    silent = _idle_connection(fresh_port)
    trickling = _idle_connection(fresh_port, b"GET /jwks.json HT")  # never finishes its request
    try:
        assert _closed_by_server(silent) and _closed_by_server(trickling)
        assert server.closed_idle == 2
    finally:
        silent.close()
        trickling.close()
    assert _fetch(fresh_port).status_code == 200  # and it still serves


def test_keep_alive_requests_and_unknown_paths(fresh_port):
    publisher.serve(fresh_port, DOCUMENTS)
    with httpx.Client(trust_env=False, timeout=5) as client:
        base = f"http://127.0.0.1:{fresh_port}"
        assert client.get(base + "/agent.json").json() == {"client_id": "x"}
        assert client.get(base + "/jwks.json").json() == {"keys": []}  # the same connection
        assert client.get(base + "/other").status_code == 404
        assert client.post(base + "/jwks.json", content=b"{}").status_code == 405
        assert client.head(base + "/jwks.json").status_code == 200


@pytest.fixture
def home(tmp_path):
    return Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")


def _ours(home: Paths, port: int, key: ec.EllipticCurvePrivateKey):
    settings = write_settings(home, development_settings(port))
    return settings, settings.metadata(), jwks_document([key.public_key()])


@pytest.mark.parametrize("case", ["another key", "a redirect to our documents", "not our CIMD"])
def test_a_port_held_by_another_program_is_left_and_the_move_recorded(home, case):
    key, other_key = (
        ec.generate_private_key(ec.SECP256R1()),
        ec.generate_private_key(ec.SECP256R1()),
    )
    port = free_loopback_port()
    settings, metadata, jwks = _ours(home, port, key)
    cimd_path, jwks_path = "/poppy-tui/agent.json", "/poppy-tui/jwks.json"
    assert settings.client_id.endswith(cimd_path) and settings.jwks_uri.endswith(jwks_path)
    genuine = None
    if case == "another key":  # our very CIMD copied, but its own key in the JWKS
        hostile = Hostile(
            port, {cimd_path: metadata, jwks_path: jwks_document([other_key.public_key()])}
        )
    elif case == "not our CIMD":  # our public key (it is public) beside a CIMD of its own making
        hostile = Hostile(
            port,
            {
                cimd_path: {**metadata, "redirect_uris": ["http://127.0.0.1:1/steal"]},
                jwks_path: jwks,
            },
        )
    else:  # points at a genuine copy elsewhere: a redirect is not followed
        genuine_port = free_loopback_port()
        genuine = publisher.serve(genuine_port, {cimd_path: metadata, jwks_path: jwks})
        hostile = Hostile(port, {}, redirect_to=f"http://127.0.0.1:{genuine_port}")
    try:
        identity = load_identity(home, True, lambda: key)
        assert jwks_path in hostile.requests  # it asked whoever holds the port
        moved = identity.settings.loopback_port
        assert moved != port
        assert read_settings(home) == identity.settings  # recorded for the next start
        assert (
            _fetch(moved, jwks_path).json() == jwks
            and _fetch(moved, cimd_path).json() == identity.metadata()
        )
    finally:
        hostile.stop()
        if genuine is not None:
            publisher.stop(genuine.port)


@pytest.mark.parametrize("proxy", [None, "http://127.0.0.1:9"])
def test_a_port_held_by_another_poppy_tui_of_this_home_is_shared(home, monkeypatch, proxy):
    """Asked directly, whatever proxy the environment names (the check never uses one)."""
    if proxy is not None:
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(name, proxy)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
    key = ec.generate_private_key(ec.SECP256R1())
    port = free_loopback_port()
    settings, metadata, jwks = _ours(home, port, key)
    hostile = Hostile(port, {"/poppy-tui/agent.json": metadata, "/poppy-tui/jwks.json": jwks})
    try:
        identity = load_identity(home, True, lambda: key)
        assert identity.settings == settings and read_settings(home) == settings  # not moved
    finally:
        hostile.stop()


def test_a_port_held_by_a_silent_program_is_left(home, monkeypatch):
    monkeypatch.setattr(publisher, "CHECK_TIMEOUT_SECONDS", 0.3)
    key = ec.generate_private_key(ec.SECP256R1())
    port = free_loopback_port()
    settings, _, _ = _ours(home, port, key)
    silent = socket.socket()
    silent.bind(("127.0.0.1", port))
    silent.listen(8)  # accepts (the kernel does), never answers
    try:
        identity = load_identity(home, True, lambda: key)
        assert identity.settings.loopback_port != port and read_settings(home) == identity.settings
    finally:
        silent.close()


def test_started_again_right_after_closing_a_connection_it_keeps_its_port(home):
    """A connection the publisher closed leaves its port in TIME_WAIT for a minute: poppy-tui
    started again in that minute read its own port as taken and moved its identity (a new
    client_id) unless the listener reuses the address."""
    key = ec.generate_private_key(ec.SECP256R1())
    port = free_loopback_port()
    settings, _, jwks = _ours(home, port, key)
    try:
        first = load_identity(home, True, lambda: key)
        assert first.settings == settings
        with httpx.Client(
            trust_env=False, timeout=5
        ) as client:  # a Company's keep-alive connection
            assert client.get(f"http://127.0.0.1:{port}/poppy-tui/jwks.json").json() == jwks
            publisher.stop(port)  # the process ends: the server closes the connection first
        again = load_identity(home, True, lambda: key)
        assert again.settings == settings and read_settings(home) == settings  # not moved
        assert _fetch(port, "/poppy-tui/jwks.json").json() == jwks
    finally:
        publisher.stop(port)
