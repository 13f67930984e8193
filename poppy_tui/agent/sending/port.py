"""What the dispatcher uses of the agent that runs it: the `Agent` facade (agent.py) meets this
Protocol and builds the dispatcher; the dispatcher imports nothing of the facade."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from poppy_tui.agent.config import Config
    from poppy_tui.agent.store import CompanyRecord, OperationRecord, Store
    from poppy_tui.agent.transports import Exchange
    from poppy_tui.protocol.approval import Approval


class DispatchAgent(Protocol):
    @property
    def store(self) -> Store: ...
    @property
    def config(self) -> Config: ...

    async def send_approval(self, op: OperationRecord, approval: Approval) -> Exchange:
        """Put the approval on the wire, through the interface and in the Session it goes in."""
        ...

    def signing_problem(self) -> str | None:
        """Why approvals can't be signed here (may load the key), or None."""
        ...

    def signing_key_loaded(self) -> bool:
        """Whether they can, known without touching the keyring."""
        ...

    async def find_out(self) -> int:
        """Find out about the unknown outcomes that are due (the outcome probe)."""
        ...

    async def sign_in_state(self, company: CompanyRecord) -> str | None:
        """A fingerprint of the access token held now at the Company, or None signed out."""
        ...

    async def token_refused(self, company: CompanyRecord, fingerprint: str | None) -> None:
        """The Company refused this token (401 invalid_token): drop it (renew, or end the sign-in)."""
        ...
