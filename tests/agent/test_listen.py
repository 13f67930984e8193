"""Where a server of poppy-tui's listens (agent/listen.py, for `mcp --http` and `web`): a port
out of range is said as such, not as a form it has (walk K13); its neighbours still parse."""

from __future__ import annotations

import pytest

from poppy_tui.agent.listen import ListenError, parse_listen


@pytest.mark.parametrize("text", ["127.0.0.1:70000", "[::1]:65536", "127.0.0.1:" + "9" * 30])
def test_a_port_out_of_range_is_said_to_be_out_of_range(text):
    with pytest.raises(ListenError) as refused:
        parse_listen(text)
    said = str(refused.value)
    assert said.startswith("--listen: the port must be a number from 0 to 65535"), said
    assert len(said) < 200


@pytest.mark.parametrize("text", ["127.0.0.1", "127.0.0.1:", ":8765", "127.0.0.1:-1", "::1:80"])
def test_what_is_not_host_and_port_is_said_so(text):
    with pytest.raises(ListenError, match="--listen wants HOST:PORT"):
        parse_listen(text)


@pytest.mark.parametrize(("text", "port"), [("127.0.0.1:65535", 65535), ("[::1]:0", 0)])
def test_the_ports_at_the_ends_of_the_range_are_taken(text, port):
    assert parse_listen(text).port == port
