"""The development identity's port is chosen where the kernel's outgoing connections don't go.

It is recorded once and bound again at every start. A loopback connection whose own end is on
that port, while poppy-tui is stopped, makes the port taken: the identity moves, its client_id
changes, and every Session a Company bound to the old one ends (an approval still to be resent in
one of them could then only be called in doubt). The kill -9 tests met this under load."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.identity import load_identity, publisher
from poppy_tui.agent.identity import settings as identity_settings
from poppy_tui.agent.identity.settings import (
    DYNAMIC_PORTS,
    development_settings,
    ephemeral_ports,
    free_loopback_port,
    read_settings,
    write_settings,
)
from poppy_tui.agent.paths import Paths

on_linux = pytest.mark.skipif(
    ephemeral_ports() is None, reason="the kernel does not say which ports it gives out"
)


@on_linux
def test_the_port_is_a_dynamic_one_the_kernel_does_not_give_to_outgoing_connections():
    ephemeral = ephemeral_ports()
    assert ephemeral is not None
    ports = {free_loopback_port() for _ in range(50)}
    assert all(port in DYNAMIC_PORTS and port not in ephemeral for port in ports)
    assert len(ports) > 1  # chosen at random among them, not one port for every home


def test_where_the_kernel_does_not_say_it_picks_the_port(monkeypatch, tmp_path):
    monkeypatch.setattr(identity_settings, "EPHEMERAL_RANGE_FILE", Path(tmp_path / "absent"))
    assert ephemeral_ports() is None
    port = free_loopback_port()
    with socket.socket() as sock:  # free: it binds
        sock.bind(("127.0.0.1", port))


@on_linux
def test_taken_dynamic_ports_are_passed_over(monkeypatch):
    ephemeral = ephemeral_ports()
    assert ephemeral is not None
    candidates = [port for port in DYNAMIC_PORTS if port not in ephemeral]
    held: list[socket.socket] = []
    for first in range(len(candidates) - 3):
        window = candidates[first : first + 3]
        if window[-1] - window[0] != 2:
            continue
        held = []
        for port in window:
            sock = socket.socket()
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                sock.close()
                break
            held.append(sock)
        if len(held) == 3:
            break
        for sock in held:
            sock.close()
    assert len(held) == 3, "no three free dynamic ports in a row"
    taken = {sock.getsockname()[1] for sock in held}
    monkeypatch.setattr(identity_settings, "DYNAMIC_PORTS", range(min(taken), max(taken) + 1))
    try:
        port = free_loopback_port()  # every candidate taken: the kernel's choice, free all the same
        assert port not in taken
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
    finally:
        for sock in held:
            sock.close()


def test_a_recorded_port_is_kept(tmp_path):
    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    port = free_loopback_port()
    write_settings(paths, development_settings(port))
    key = ec.generate_private_key(ec.SECP256R1())
    try:
        assert load_identity(paths, True, lambda: key).settings.loopback_port == port
        assert read_settings(paths).loopback_port == port
    finally:
        publisher.stop(port)
