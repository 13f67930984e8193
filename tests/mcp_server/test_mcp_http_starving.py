"""Nobody starves the gate, tested with raw sockets against `serve_http` on 127.0.0.1 (uvicorn and
the MCP SDK for real, in this process so that the limits can be small): a request head that
doesn't arrive in time gets 408 and its connection closes; connections without a valid token are
kept apart, the oldest pushed out (503, Retry-After), never an agent's; each agent has its own caps
of connections, sessions and requests in flight (429, Retry-After) and the others go on; every
refusal closes its connection."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

import pytest

from poppy_tui.mcp_server.http_guard import AgentLimits
from tests.mcp_server.http_support import (
    INITIALIZE,
    VERSION,
    agent_token,
    in_process_gate,
    token_of,
)

pytestmark = pytest.mark.slow

READ_SECONDS = 30


async def connect(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    parts = urlsplit(url)
    return await asyncio.open_connection(parts.hostname, parts.port)


def request(
    url: str,
    token: str | None,
    body: object = INITIALIZE,
    *,
    method: str = "POST",
    session: str | None = None,
) -> bytes:
    parts = urlsplit(url)
    data = b"" if body is None else json.dumps(body).encode()
    lines = [
        f"{method} {parts.path} HTTP/1.1",
        f"Host: {parts.hostname}:{parts.port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {len(data)}",
    ]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    if session is not None:
        lines += [f"Mcp-Session-Id: {session}", f"Mcp-Protocol-Version: {VERSION}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


async def answer_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    """The status and headers of the next answer on a connection."""
    raw = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_SECONDS)
    status_line, *header_lines = raw.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers


async def until_closed(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection."""
    return await asyncio.wait_for(reader.read(), READ_SECONDS)


async def test_a_head_not_sent_in_time_gets_408_and_the_connection_closes(home):
    async with in_process_gate(home, head_seconds=0.3) as (url, agent, client):
        silent = await connect(url)  # sends nothing at all
        partial = await connect(url)
        partial[1].write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        await partial[1].drain()
        for reader, _ in (silent, partial):
            assert (await until_closed(reader)).startswith(b"HTTP/1.1 408 Request Timeout")
        # A head sent a byte at a time gets no more time than one sent at once: the deadline
        # counts from its first byte, not from the last.
        trickle_reader, trickle = await connect(url)
        head = request(url, "x" * 43)
        sent = 0
        while not trickle_reader.at_eof() and sent < len(head):
            trickle.write(head[sent : sent + 1])
            sent += 1
            try:
                await asyncio.wait_for(trickle_reader.read(1), 0.05)
            except TimeoutError:
                continue
            break
        assert sent < len(head)  # closed before the head was whole
        # A connection kept alive between requests: the next head has the same deadline.
        reader, writer = await connect(url)
        writer.write(
            request(
                url, token_of(home), {"jsonrpc": "2.0", "id": 1, "method": "ping"}, session="none"
            )
        )
        status, headers = await answer_head(reader)
        assert status == 404  # no such session: answered, and the connection kept alive
        await reader.readexactly(int(headers["content-length"]))
        writer.write(b"POST /mcp HTTP/1.1\r\n")
        assert (await until_closed(reader)).startswith(b"HTTP/1.1 408 Request Timeout")
        # A refusal closes its connection at once (no slot held for another try).
        reader, writer = await connect(url)
        writer.write(request(url, None))
        status, headers = await answer_head(reader)
        assert status == 401 and headers["connection"] == "close"
        await until_closed(reader)
        assert reader.at_eof()
        # And a head sent in time is served.
        assert (await client.post(url, json=INITIALIZE)).status_code == 200


async def test_connections_without_a_token_push_out_the_oldest_never_an_agents(home):
    token = agent_token(home, "steady")
    async with in_process_gate(home, token, max_anonymous=4, head_seconds=60) as (
        url,
        agent,
        client,
    ):
        flood = [await connect(url) for _ in range(6)]
        for _, writer in flood:
            writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            await writer.drain()
        # The two oldest were pushed out, with 503 and Retry-After; the four newest are held.
        for reader, _ in flood[:2]:
            pushed = await until_closed(reader)
            assert pushed.startswith(b"HTTP/1.1 503") and b"retry-after: 5" in pushed
        # An agent with its token is answered while the four hold their connections open.
        opened = await client.post(url, json=INITIALIZE)
        assert opened.status_code == 200
        listed = await client.post(
            url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
            headers={
                "Mcp-Session-Id": opened.headers["mcp-session-id"],
                "Mcp-Protocol-Version": VERSION,
            },
        )
        assert listed.status_code == 200
        held = sum(not reader.at_eof() for reader, _ in flood[2:])
        assert held >= 2  # the agent's own connections pushed out at most two of them
        for _, writer in flood:
            writer.close()


async def test_each_agent_has_its_own_caps_and_the_others_go_on(home):
    greedy, other = agent_token(home, "greedy"), agent_token(home, "other")
    limits = AgentLimits(connections=10, sessions=2, in_flight=2)
    async with in_process_gate(home, greedy, agent_limits=limits) as (url, agent, client):
        # Sessions: two open, a third refused with 429 and Retry-After; another agent's opens.
        sessions = []
        for _ in range(2):
            opened = await client.post(url, json=INITIALIZE)
            assert opened.status_code == 200
            sessions.append(opened.headers["mcp-session-id"])
        refused = await client.post(url, json=INITIALIZE)
        assert refused.status_code == 429 and refused.headers["retry-after"] == "5"
        assert "2 MCP sessions open" in refused.json()["error"]["message"]
        assert refused.headers["connection"] == "close"
        theirs = await client.post(
            url, json=INITIALIZE, headers={"Authorization": f"Bearer {other}"}
        )
        assert theirs.status_code == 200
        # Ending one (DELETE) makes room again.
        ended = await client.delete(
            url, headers={"Mcp-Session-Id": sessions[0], "Mcp-Protocol-Version": VERSION}
        )
        assert ended.status_code == 200
        again = await client.post(url, json=INITIALIZE)
        assert again.status_code == 200
        sessions = [sessions[1], again.headers["mcp-session-id"]]

        # Requests in flight: two open GET streams hold both; a third request is refused, the
        # other agent's is not; closing a stream makes room.
        streams = []
        for session in sessions:
            reader, writer = await connect(url)
            writer.write(request(url, greedy, None, method="GET", session=session))
            status, _ = await answer_head(reader)
            assert status == 200
            streams.append((reader, writer))
        busy = await client.post(
            url,
            json={"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}},
            headers={"Mcp-Session-Id": sessions[0], "Mcp-Protocol-Version": VERSION},
        )
        assert busy.status_code == 429 and "2 requests in flight" in busy.json()["error"]["message"]
        listed = await client.post(
            url,
            json={"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}},
            headers={
                "Authorization": f"Bearer {other}",
                "Mcp-Session-Id": theirs.headers["mcp-session-id"],
                "Mcp-Protocol-Version": VERSION,
            },
        )
        assert listed.status_code == 200
        streams[0][1].close()
        for _ in range(200):  # the server sees the stream's end
            freed = await client.post(
                url,
                json={"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}},
                headers={"Mcp-Session-Id": sessions[1], "Mcp-Protocol-Version": VERSION},
            )
            if freed.status_code != 429:
                break
            await asyncio.sleep(0.05)
        assert freed.status_code == 200
        streams[1][1].close()


async def test_an_agent_holding_too_many_connections_is_refused_on_the_next(home):
    greedy, other = agent_token(home, "greedy"), agent_token(home, "other")
    limits = AgentLimits(connections=3, sessions=16, in_flight=16)
    async with in_process_gate(home, greedy, agent_limits=limits) as (url, agent, client):
        held = []
        for _ in range(3):  # each served once, then kept alive
            reader, writer = await connect(url)
            writer.write(request(url, greedy))
            status, headers = await answer_head(reader)
            assert status == 200
            await reader.readexactly(int(headers.get("content-length", "0")))
            held.append((reader, writer))
        reader, writer = await connect(url)
        writer.write(request(url, greedy))
        status, headers = await answer_head(reader)
        assert status == 429 and headers["retry-after"] == "5" and headers["connection"] == "close"
        assert (
            await client.post(url, json=INITIALIZE, headers={"Authorization": f"Bearer {other}"})
        ).status_code == 200
        for _, w in [*held, (reader, writer)]:
            w.close()
