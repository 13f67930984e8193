"""What every interface of the demo Company shares: shop, operation desk, Session
verifier, faults, and the extension negotiation."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Mapping, MutableMapping

from poppy_tui.demo.idempotency import IdempotencyKeys
from poppy_tui.demo.accounts.guard import Caller, require
from poppy_tui.demo.accounts.service import Accounts, AccountsOptions
from poppy_tui.demo.agent_registry import AgentRegistry
from poppy_tui.demo.faults import FaultCounters, Faults
from poppy_tui.demo.ledger import PerformedLedger
from poppy_tui.demo.operations import OperationDesk
from poppy_tui.demo.sessions import SessionVerifier
from poppy_tui.demo.shop import Shop
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.extensions import declares_operations, major_of
from poppy_tui.protocol.session_jwt import VerifiedSession

ORGANIZATION_NAME = "Manzanita Outfitters"
RETRY_AFTER_SECONDS = 1


@dataclass
class CompanyContext:
    base_url: str  # http://127.0.0.1:PORT, no trailing slash
    faults: Faults = field(default_factory=Faults)
    expiry_seconds: float = 900
    extension_version: str | None = c.EXTENSION_VERSION  # what poppy.json lists; None lists nothing
    shop: Shop = field(default_factory=Shop)
    accounts_options: AccountsOptions | None = None  # None: no accounts, every Session signed out
    accounts: Accounts | None = field(init=False, default=None)
    ledger_path: str | os.PathLike[str] | None = None  # SQLite record of performed operations
    desk: OperationDesk = field(init=False)
    agents: AgentRegistry = field(init=False)  # the agents' CIMDs and keys, fetched and checked
    sessions: SessionVerifier = field(init=False)
    counters: FaultCounters = field(init=False)
    idempotency_keys: IdempotencyKeys = field(init=False)

    def __post_init__(self) -> None:
        self.base_url = self.base_url.rstrip("/")
        self.agents = AgentRegistry()
        if self.accounts_options is not None:
            self.accounts = Accounts(self.base_url, self.domain, self.accounts_options, self.agents)
        ledger = PerformedLedger(self.ledger_path) if self.ledger_path is not None else None
        self.desk = OperationDesk(self.shop, self.faults, self.expiry_seconds, ledger)
        self.sessions = SessionVerifier(audience=self.issuer, registry=self.agents)
        self.counters = FaultCounters(self.faults)
        self.idempotency_keys = IdempotencyKeys()

    @property
    def domain(self) -> str:
        return self.base_url.split("://", 1)[1]

    @property
    def issuer(self) -> str:
        return self.accounts.issuer if self.accounts is not None else self.base_url

    def caller(self, headers: Mapping[str, str], session: VerifiedSession) -> Caller:
        """The token checks (after the Session checks). Without accounts, Authorization is ignored."""
        if self.accounts is None:
            return Caller(session)
        return self.accounts.authenticate(headers, session)

    def require(self, caller: Caller, needs: tuple[str, ...], what: str = "do this") -> None:
        """Raise the sign-in challenge unless `caller` holds `needs` (never without accounts)."""
        if self.accounts is not None:
            require(caller, needs, what)

    @property
    def supports_operations_v2(self) -> bool:
        return (
            self.extension_version is not None
            and major_of(self.extension_version) == c.EXTENSION_MAJOR
        )

    def operations_in_use(self, headers: Mapping[str, str] | None) -> bool:
        """Spec 2: only when this Company lists version 2 and the request declares it."""
        if not self.supports_operations_v2 or headers is None:
            return False
        return declares_operations(headers.get(c.HEADER_EXTENSIONS))

    def approval_unavailable(self) -> tuple[int, dict[str, Any]]:
        """The API answer to a request needing approval when the extension isn't in use."""
        if self.extension_version is not None:
            wanted = f'{c.HEADER_EXTENSIONS}: "{c.EXTENSION_NAME}";v="{self.extension_version}"'
            return 403, {
                "error": "extension_required",
                "extension": c.EXTENSION_NAME,
                "error_description": f"This action needs the User's approval; declare {wanted} to receive an operation.",
            }
        return 403, {
            "error": "website_approval_required",
            "error_description": f"This action needs the User's approval, which {ORGANIZATION_NAME} takes only on its website.",
        }

    def approval_unavailable_text(self) -> str:
        if self.extension_version is not None:
            return (
                f"Not done. This needs the user's approval, and this agent didn't declare the "
                f'operations extension version {self.extension_version} (Poppy-Extensions: "operations";v="{self.extension_version}"). '
                f"The user can approve it on the {ORGANIZATION_NAME} website instead."
            )
        return f"Not done. This needs the user's approval, which {ORGANIZATION_NAME} takes only on its website."


def request_flags(scope: MutableMapping[str, Any]) -> dict[str, Any]:
    """Per-request notes shared between the outer ASGI wrapper and handlers (e.g. "drop").

    A dict object in the scope survives the scope copies routers and the MCP
    transport make, so a tool can flag the HTTP request that carried it.
    """
    flags = scope.get("poppy")
    if not isinstance(flags, dict):
        flags = scope["poppy"] = {}
    return flags
