"""The demo Company's AgentRegistry: CIMD and JWKS fetched over real loopback HTTP and checked."""

from __future__ import annotations

import asyncio

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.identity.publisher import serve
from poppy_tui.agent.identity.settings import free_loopback_port
from poppy_tui.demo.agent_registry import AgentRegistry, AgentRejected
from poppy_tui.protocol.client_metadata import jwks_document, key_id


def new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


class Host:
    """One agent's documents on a loopback port, editable between fetches."""

    def __init__(self) -> None:
        self.port = free_loopback_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.client_id = self.origin + "/a/agent.json"
        self.metadata = {
            "client_id": self.client_id,
            "client_name": "Test agent",
            "jwks_uri": self.origin + "/a/jwks.json",
            "redirect_uris": [self.origin + "/a/back"],
            "token_endpoint_auth_method": "private_key_jwt",
        }

    def publish(self, jwks: dict, metadata: dict | None = None) -> None:
        serve(self.port, {"/a/agent.json": metadata or self.metadata, "/a/jwks.json": jwks})


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def run(coro):
    return asyncio.run(coro)


def test_key_for_a_published_kid_and_the_metadata():
    host, key = Host(), new_key()
    host.publish(jwks_document([key.public_key()]))
    registry = AgentRegistry()
    found = run(registry.key_for(host.client_id, key_id(key.public_key())))
    assert found.public_numbers() == key.public_key().public_numbers()
    assert run(registry.metadata(host.client_id))["redirect_uris"] == [host.origin + "/a/back"]


def test_unknown_kid_refetches_at_most_every_30_seconds():
    host, old, new = Host(), new_key(), new_key()
    host.publish(jwks_document([old.public_key()]))
    clock = Clock()
    registry = AgentRegistry(clock=clock)
    run(registry.key_for(host.client_id, key_id(old.public_key())))
    host.publish(jwks_document([old.public_key(), new.public_key()]))
    fetches = len(registry.fetches)
    clock.now += 10
    with pytest.raises(AgentRejected, match="not in the agent's JWKS"):
        run(registry.key_for(host.client_id, key_id(new.public_key())))
    assert len(registry.fetches) == fetches  # too soon: nothing fetched
    clock.now += 25
    assert run(registry.key_for(host.client_id, key_id(new.public_key())))
    assert registry.fetches[fetches:] == [host.origin + "/a/jwks.json"]
    clock.now += 1
    with pytest.raises(AgentRejected):
        run(registry.key_for(host.client_id, "no-such-kid"))
    assert len(registry.fetches) == fetches + 1


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"client_id": "http://127.0.0.1:1/a/agent.json"}, "not the URL it was fetched from"),
        ({"jwks_uri": "http://127.0.0.2:9/a/jwks.json"}, "jwks_uri"),
        ({"redirect_uris": ["https://elsewhere.example/back"]}, "redirect_uri"),
        ({"token_endpoint_auth_method": "none"}, "private_key_jwt"),
        ({"jwks": {"keys": []}}, "embedded"),
    ],
)
def test_cimd_rules(change, words):
    host, key = Host(), new_key()
    host.publish(jwks_document([key.public_key()]), {**host.metadata, **change})
    with pytest.raises(AgentRejected, match=words) as caught:
        run(AgentRegistry().key_for(host.client_id, key_id(key.public_key())))
    assert host.client_id in str(caught.value) and caught.value.error == "invalid_client"


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"kty": "oct", "k": "c2VjcmV0", "kid": "h"}, "symmetric"),
        ({"kty": "EC", "crv": "P-256", "x": "a", "y": "b", "d": "c", "kid": "p"}, "private"),
        ({"kty": "EC", "crv": "P-256", "x": "a", "y": "b"}, "kid"),
    ],
)
def test_jwks_rules(entry, words):
    host = Host()
    host.publish({"keys": [entry]})
    with pytest.raises(AgentRejected, match=words):
        run(AgentRegistry().key_for(host.client_id, "h"))


def test_https_is_required_unless_loopback_dev_mode_is_on():
    host, key = Host(), new_key()
    host.publish(jwks_document([key.public_key()]))
    with pytest.raises(AgentRejected, match="https"):
        run(
            AgentRegistry(loopback_client_ids=False).key_for(
                host.client_id, key_id(key.public_key())
            )
        )
    with pytest.raises(AgentRejected, match="https"):
        run(AgentRegistry().key_for("http://shop.example/agent.json", "k"))
