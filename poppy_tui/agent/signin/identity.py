"""Who the agent is toward an authorization server: what sign-in needs of the agent identity
(poppy_tui/agent/identity's AgentIdentity): its client_id and private_key_jwt assertions whose
`aud` is the Company's issuer."""

from __future__ import annotations

from typing import Protocol


class ClientIdentity(Protocol):
    @property
    def client_id(self) -> str: ...

    def client_assertion(self, audience: str) -> str: ...
