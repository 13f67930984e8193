"""The guarded transport's connection pool (netguard._pool_class): httpcore's pool, with its
check for surplus keep-alive connections done in one step instead of a pass over every
connection per idle connection (issue #15 target 3). What the pool does stays httpcore's."""

from __future__ import annotations

import asyncio

import httpx

from poppy_tui.agent.netguard import guarded_client_options

from tests.netguard.test_guarded_stream import RawHttpServer


def _client(max_connections: int, keepalive: int) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=keepalive)
    return httpx.AsyncClient(**guarded_client_options(httpx, True, limits))


def _pool(client: httpx.AsyncClient):
    return client._transport._pool


async def test_surplus_idle_connections_are_closed_and_the_kept_ones_reused():
    async with RawHttpServer() as server:
        server.hold_until = 4  # four requests at once: four connections
        async with _client(max_connections=4, keepalive=1) as client:
            answers = await asyncio.gather(*(client.get(f"{server.base_url}/{n}") for n in range(4)))
            assert [a.status_code for a in answers] == [200] * 4
            assert server.connections == 4
            # Keep-alive limit 1: once they are idle, the pool keeps one connection open.
            assert len(_pool(client).connections) == 1
            again = await client.get(f"{server.base_url}/again")
            assert again.status_code == 200
            assert server.connections == 4  # the kept connection carried it


async def test_the_pools_bookkeeping_asks_each_connection_once_not_once_per_idle_connection():
    async with RawHttpServer() as server:
        server.hold_until = 8
        async with _client(max_connections=20, keepalive=20) as client:
            await asyncio.gather(*(client.get(f"{server.base_url}/{n}") for n in range(8)))
            connections = _pool(client).connections
            assert len(connections) == 8
            asked = {"is_idle": 0}
            for connection in connections:
                real = connection.is_idle

                def counted(real=real) -> bool:
                    asked["is_idle"] += 1
                    return real()

                connection.is_idle = counted
            server.hold_until = 0
            assert (await client.get(f"{server.base_url}/one-more")).status_code == 200
    # One request added and removed: two passes over eight connections, plus the lists the
    # assignment builds. httpcore's own pool asks 8 x 8 per pass (over 128 in all).
    assert asked["is_idle"] <= 4 * 8
