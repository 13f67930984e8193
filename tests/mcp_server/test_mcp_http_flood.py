"""A slow-header flood without a token can't starve `poppy-tui mcp --http` (the real subprocess,
with its real limits): 300 raw connections each send half a request head and hold it, and an agent
with its token (the MCP SDK's streamable-HTTP client) opens a session and is answered while the
flood still holds its connections open. Before, 256 such connections filled uvicorn's connection
limit and every agent got 503 until they went away, which they never did."""

from __future__ import annotations

import socket
import time

import pytest

from tests.mcp_server.http_support import agent_token, http_session, running_gate

pytestmark = pytest.mark.slow

FLOOD = 300
HALF_A_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


def held_by_the_server(connection: socket.socket) -> bool:
    """Still open at the server and unanswered: nothing to read (no 503, no 408) and no close."""
    connection.setblocking(False)  # a socket with a timeout would wait for the answer
    try:
        connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)  # an answer, or b"" when closed
    except BlockingIOError:
        return True
    except OSError:
        return False
    return False


async def test_a_slow_header_flood_without_a_token_leaves_an_agent_answered(home, tmp_path):
    token = agent_token(home, "steady")
    with running_gate(home, tmp_path) as gate:
        flood = []
        try:
            for _ in range(FLOOD):
                connection = socket.create_connection(("127.0.0.1", gate.port), timeout=30)
                connection.sendall(HALF_A_HEAD)
                flood.append(connection)
            started = time.monotonic()
            async with http_session(gate.url, token) as session:
                listed = await session.call_tool("list_pending", {})
                answered = time.monotonic() - started
                held = sum(held_by_the_server(c) for c in flood)
            print(
                f"\nagent answered (initialize, initialized, tools/call) {answered:.3f} s after a flood "
                f"of {FLOOD} half-sent heads; the server held {held} of them open meanwhile"
            )
            assert listed.is_error is False
            assert listed.structured_content == {"operations": []}
            # The flood was still holding its connections when the agent was answered: the
            # agent was not answered merely because the flood had timed out.
            assert held >= 100
        finally:
            for connection in flood:
                connection.close()
