"""The `Agent` facade: the only entry point the UI and CLI use to talk to Companies.

A thin face over the parts: it builds them on first use (store, Sessions, transports, sign-in,
the dispatcher and the outcome probe) and wires them together. What a request's answer means
for its caller is request_results.py; which transport an approval goes through,
transports/routing.py; waiting for an outcome, outcome_wait.py; what happens to an operation,
the lifecycle (agent/lifecycle), which the store persists and the dispatcher carries out. Every
request is recorded before it is sent, every first response after; operations are kept the
moment they arrive.
"""

from __future__ import annotations

import asyncio
import threading
from functools import cached_property
from typing import TYPE_CHECKING, Any
from collections.abc import Awaitable, Callable

# Only what constructing an Agent and reading the store need is imported here: the TUI's first
# frame waits on this module. The network stack (httpx2, the transports, the dispatcher, sign-in,
# cryptography and jwt through keys and identity) is imported where first used, and the parts
# built on it are made on first use (cached properties below); so are the request types, uuid
# and hashlib, which only sending needs.
from poppy_tui.agent.background import BackgroundTasks
from poppy_tui.agent.company_access import CompanyAccess
from poppy_tui.agent.config import Config, load_config
from poppy_tui.agent.errors import AgentError, ApprovalUnsignable
from poppy_tui.agent.outcome_wait import SETTLED
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.request_results import ConversationResult, RequestResult
from poppy_tui.agent.signing import Signing

if TYPE_CHECKING:
    from poppy_tui.agent.store import CompanyRecord, OperationRecord, Store
    from poppy_tui.agent.store.reader import InboxReader
    from poppy_tui.agent.store.requests import Requester
    import httpx2
    from cryptography.hazmat.primitives.asymmetric import ec

    from poppy_tui.agent.dispatcher import Dispatcher
    from poppy_tui.agent.identity import AgentIdentity
    from poppy_tui.agent.lifecycle import Explanation
    from poppy_tui.agent.outcome_probe import OutcomeProbe
    from poppy_tui.agent.resource_read import ResourceReader
    from poppy_tui.agent.store.resource_reads import ResourceRead
    from poppy_tui.agent.sessions import Sessions
    from poppy_tui.agent.signin.service import SignIns
    from poppy_tui.agent.transports import Exchange
    from poppy_tui.agent.transports.api import ApiTransport
    from poppy_tui.agent.transports.conversation import Conversations
    from poppy_tui.protocol.approval import Approval
    from poppy_tui.protocol.retry import BackoffPolicy

__all__ = [
    "SETTLED",
    "Agent",
    "AgentError",
    "ApprovalUnsignable",
    "ConversationResult",
    "RequestResult",
]


class Agent(Signing, CompanyAccess):
    """Cheap to construct: the store and config are all it holds at first. Sessions, the
    transports, the dispatcher, sign-in and the outcome probe are built on first use (each a
    cached property; a test may assign its own), so the TUI paints before any of them exists."""

    _UNSET: Any = object()

    def __init__(
        self,
        store: Store | None,
        config: Config,
        paths: Paths,
        *,
        reader: InboxReader | None = None,
        key: ec.EllipticCurvePrivateKey | None = None,
        owner: str | None = None,
        lease_seconds: float | None = None,
        backoff: BackoffPolicy | None = None,
        reply_wait_seconds: float | None = None,
        inline_retry_seconds: float | None = None,
    ) -> None:
        # None: opened on first use (Agent.open(lazy_store=True)); until then `reader` serves lists.
        self._store = store
        self._store_opening = threading.Lock()
        self._reader = reader
        self.config = config
        self.paths = paths
        self._client: httpx2.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._key = key
        self._owner = owner
        self._lease_seconds = lease_seconds  # None: the dispatcher's default
        self._backoff = backoff
        self._reply_wait_seconds = reply_wait_seconds
        # None: the dispatcher's default; 0: every retry delay goes through the store's schedule
        # (next_attempt_at), so a pass never waits real time (a simulation with its own clock).
        self._inline_retry_seconds = inline_retry_seconds
        self._identity: AgentIdentity | None = None
        self._mcp: Any = None
        # Sign-in (spec 5.4): the access token a signed-in request carries, or None when signed
        # out. Unset means sign-in's own (self.signins.access_token); tests assign their own.
        self._access_token_source: Any = Agent._UNSET
        # Reads of arriving operations' resources (resource_read.py), running as tasks.
        self._resource_reads = BackgroundTasks("reading a resource")

    # ---- parts built on first use ------------------------------------------------------------

    @property
    def store(self) -> Store:
        """The whole store. The TUI opens it after its first frame (prepare_network, in a thread):
        its write side and records cost ~20 ms of imports that the first frame doesn't need."""
        if self._store is None:
            with self._store_opening:  # the network thread and the event loop may both ask first
                if self._store is None:
                    from poppy_tui.agent.store import Store

                    self._store = Store.open(self.paths.database)
        return self._store

    @store.setter
    def store(self, store: Store) -> None:
        self._store = store

    @property
    def reader(self) -> Any:
        """What lists and polls read: the light InboxReader until the store is needed, else the store."""
        return self._reader if self._reader is not None else self.store

    @property
    def access_token_source(self) -> Callable[[CompanyRecord], Awaitable[str | None]] | None:
        if self._access_token_source is Agent._UNSET:
            return self.signins.access_token
        return self._access_token_source

    @access_token_source.setter
    def access_token_source(
        self, source: Callable[[CompanyRecord], Awaitable[str | None]] | None
    ) -> None:
        self._access_token_source = source

    @cached_property
    def sessions(self) -> Sessions:
        from poppy_tui.agent.sessions import Sessions

        sessions = Sessions(
            self.store, lambda: self.identity, allow_loopback=self.config.allow_loopback
        )
        # Read through self so that whatever is assigned to access_token_source later counts.
        sessions.token_source = self._access_token
        return sessions

    @cached_property
    def api(self) -> ApiTransport:
        from poppy_tui.agent.transports.api import ApiTransport

        return ApiTransport(self._http, self.sessions)

    @cached_property
    def conversations(self) -> Conversations:
        from poppy_tui.agent.transports.conversation import Conversations, ConversationTransport

        wait = self._reply_wait_seconds
        return Conversations(
            self.store,
            ConversationTransport(self._http, self.sessions),
            reply_wait_seconds=wait
            if wait is not None
            else min(10.0, self.config.request_timeout_seconds),
        )

    @cached_property
    def dispatcher(self) -> Dispatcher:
        """Sends what is approved (dispatcher.py), using this facade through sending/port.py."""
        from poppy_tui.agent.dispatcher import DEFAULT_INLINE_RETRY_SECONDS, Dispatcher
        from poppy_tui.agent.outcome_probe import FIRST_PROBE_SECONDS

        inline = self._inline_retry_seconds
        return Dispatcher(
            self,
            self._owner,
            self.lease_seconds,
            self.backoff,
            DEFAULT_INLINE_RETRY_SECONDS if inline is None else inline,
            probe_after=FIRST_PROBE_SECONDS,
        )

    @property
    def lease_seconds(self) -> float:
        """How long a sender's lease lasts unless renewed (the dispatcher's default unless given)."""
        if self._lease_seconds is not None:
            return self._lease_seconds
        from poppy_tui.agent.dispatcher import DEFAULT_LEASE_SECONDS

        return DEFAULT_LEASE_SECONDS

    @cached_property
    def backoff(self) -> BackoffPolicy:
        """How long to wait before resending (protocol/retry.py), as given or the default."""
        from poppy_tui.protocol.retry import BackoffPolicy

        return self._backoff or BackoffPolicy()

    @cached_property
    def signins(self) -> SignIns:
        from poppy_tui.agent.signin.service import SignIns
        from poppy_tui.agent.signin.vault import TokenVault

        return SignIns(
            self.store,
            self.config,
            self._client_identity,
            self._http,
            TokenVault(self.paths, self.config),
        )

    @cached_property
    def outcome_probe(self) -> OutcomeProbe:
        """Ops 7's "find out another way" for unknown outcomes, run by the dispatcher's loop."""
        from poppy_tui.agent.outcome_probe import OutcomeProbe

        return OutcomeProbe(self, self.send_approval, self.dispatcher.owner, self.lease_seconds)

    @cached_property
    def resource_reader(self) -> ResourceReader:
        """Reads the resource an operation changes, before the decision (resource_read.py)."""
        from poppy_tui.agent.resource_read import ResourceReader

        return ResourceReader(
            lambda: self.store,
            lambda: self.sessions,
            self._http,
            self.fetch_openapi,
            lambda: self.mcp,
        )

    async def read_resource(
        self, operation_row: int, deadline: float | None = None
    ) -> ResourceRead | None:
        """Read the operation's resource from the Company now and keep it (None: past its decision)."""
        from poppy_tui.agent.resource_read import READ_DEADLINE_SECONDS

        return await self.resource_reader.read(
            operation_row, READ_DEADLINE_SECONDS if deadline is None else deadline
        )

    def read_resource_soon(self, operation_row: int) -> None:
        """A task, so the answer to the request that returned the operation never waits for it."""
        self._resource_reads.start(self.read_resource(operation_row))

    async def settle_resource_reads(self, timeout: float) -> None:
        """Wait up to `timeout` for the reads started on arrival, then stop what is left."""
        await self._resource_reads.settle(timeout)

    def prepare_network(self) -> None:
        """Import and build everything sending needs, now. The TUI calls it in a thread after its
        first frame, so the event loop never waits on these imports."""
        for part in ("store", "dispatcher", "outcome_probe", "api", "conversations", "signins"):
            getattr(self, part)  # each a cached_property: reading it builds it
        from poppy_tui.agent.net.http import make_client  # noqa: F401  (httpx2, imported here)

    @classmethod
    def open(
        cls, paths: Paths, config: Config | None = None, *, lazy_store: bool = False, **options: Any
    ) -> Agent:
        """lazy_store: open only the InboxReader now and the whole store on first use (the TUI)."""
        paths.ensure()
        config = config or load_config(paths)
        if lazy_store:
            from poppy_tui.agent.store.reader import InboxReader

            return cls(None, config, paths, reader=InboxReader.open(paths.database), **options)
        from poppy_tui.agent.store import Store

        return cls(Store.open(paths.database), config, paths, **options)

    async def aclose(self) -> None:
        # Each read is bounded by its own deadline; a CLI that exits at once lets them finish
        # (briefly) so `show` has them, then stops what is left.
        await self.settle_resource_reads(3.0)
        if self._client is not None:
            client, self._client = self._client, None
            try:
                await client.aclose()
            except RuntimeError:
                pass  # its event loop is gone; nothing left to close
        if self._store is not None:
            self._store.close()
        if self._reader is not None:
            self._reader.close()

    @property
    def mcp(self) -> Any:
        """The MCP transport, imported on first use: the MCP SDK costs ~0.5 s to import, and
        the TUI's first paint, the CLI and most requests never need it."""
        if self._mcp is None:
            from poppy_tui.agent.transports.mcp import McpTransport

            self._mcp = McpTransport(
                self.sessions, self.config.request_timeout_seconds, self.config.allow_loopback
            )
        return self._mcp

    async def _http(self) -> httpx2.AsyncClient:
        from poppy_tui.agent.net.http import make_client

        # A client belongs to the event loop that made it; the CLI may run several loops.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = make_client(
                self.config.request_timeout_seconds,
                self.config.allow_loopback,
                self._while_request_waits,
            )
            self._client_loop = loop
        return self._client

    def _while_request_waits(self) -> None:
        """A request has been sent and its answer is awaited: sign the next request's Session
        JWT now (Sessions.sign_spares), if this agent has signed any."""
        if "sessions" in self.__dict__:
            self.sessions.sign_spares()

    async def _access_token(self, company: CompanyRecord) -> str | None:
        """`access_token_source`'s answer: the token a signed-in request carries, or None."""
        source = self.access_token_source
        return None if source is None else await source(company)

    async def sign_in_state(self, company: CompanyRecord) -> str | None:
        """A fingerprint of the access token now (never the token itself), or None signed out."""
        from poppy_tui.agent.transports import carried

        return carried(
            await self.sessions.access_token(company)
        )  # as the transports name a sent token

    async def token_refused(self, company: CompanyRecord, fingerprint: str | None) -> None:
        """The Company answered the access token with this fingerprint with 401 invalid_token."""
        source = self._access_token_source
        ours = source is Agent._UNSET or (
            "signins" in self.__dict__
            and getattr(source, "__self__", None) is self.__dict__["signins"]
        )
        if not ours:
            return  # a token source of the caller's own (a test, an embedding program): theirs to renew
        await self.signins.token_refused(company, fingerprint)

    # ---- requests (requesting.py) -----------------------------------------------------------------

    async def call_api(
        self,
        company: CompanyRecord,
        method: str,
        path_or_url: str,
        body: Any = None,
        origin: str = "cli",
        *,
        requester: Requester | None = None,
    ) -> RequestResult:
        from poppy_tui.agent import requesting

        return await requesting.call_api(
            self, company, method, path_or_url, body, origin, requester=requester
        )

    async def call_tool(
        self,
        company: CompanyRecord,
        tool: str,
        arguments: dict | None = None,
        origin: str = "cli",
        *,
        requester: Requester | None = None,
    ) -> RequestResult:
        from poppy_tui.agent import requesting

        return await requesting.call_tool(
            self, company, tool, arguments, origin, requester=requester
        )

    async def say(
        self,
        company: CompanyRecord,
        text: str,
        conversation_row: int | None = None,
        origin: str = "cli",
        *,
        requester: Requester | None = None,
    ) -> ConversationResult:
        from poppy_tui.agent import requesting

        return await requesting.say(
            self, company, text, conversation_row, origin, requester=requester
        )

    async def refresh_conversation(self, conversation_row: int) -> ConversationResult:
        from poppy_tui.agent import requesting

        return await requesting.refresh_conversation(self, conversation_row)

    # ---- decisions (only the person at the TUI makes these) ------------------------------------

    def approve(self, operation_row: int, revision_id: int) -> OperationRecord:
        problem = self.signing_problem()
        if problem:
            # Refused before anything is recorded: an approval nothing can send would only sit
            # there looking sent (docs/reliability.md, "The signing key"; conformance row A40).
            raise ApprovalUnsignable(
                f"approvals can't be signed on this machine, so nothing was approved. {problem}"
            )
        approved = self.store.approve(operation_row, revision_id, self.config.grace_seconds)
        if (
            "dispatcher" in self.__dict__
        ):  # a running dispatcher looks again now, not after its wait
            self.dispatcher.wake()
        return approved

    def decline(self, operation_row: int, revision_id: int) -> OperationRecord:
        return self.store.decline(operation_row, revision_id)

    def withdraw(self, operation_row: int) -> OperationRecord:
        return self.store.withdraw(operation_row)

    def resolve_unknown(self, operation_row: int, performed: bool) -> OperationRecord:
        return self.store.resolve_unknown(operation_row, performed)

    def confirm_account(self, operation_row: int) -> Any:
        from poppy_tui.agent.account_hold import confirm_account  # Ops 3: the person's word

        return confirm_account(self, operation_row)

    def explain(self, operation_row: int) -> Explanation:
        """Where the operation stands, as the person is told it everywhere (agent/lifecycle):
        on its way and when, or why not. Reads the store and the clock; loads no key."""
        from poppy_tui.agent import clock
        from poppy_tui.agent.lifecycle import explain

        unsignable = None if self.signing_key_loaded() else self.startup_signing_problem()
        facts = self.store.lifecycle_facts(operation_row, unsignable)
        return explain(facts, clock.now_utc())

    # ---- sending (what the dispatcher uses: sending/port.py) --------------------------------------

    async def send_approval(self, op: OperationRecord, approval: Approval) -> Exchange:
        """Put the approval on the wire: through the interface of the request that returned the
        approved revision (transports/routing.py). An operation returned signed out can be
        approved only in its own Session; one returned signed in is the account's, approved from
        the agent's current Session (Ops 3), and only with a token of that account
        (account_hold.py)."""
        from poppy_tui.agent.account_hold import send_for_its_account
        from poppy_tui.agent.transports.routing import send_over

        session_id = (
            self.store.get_company(op.company.id).session_id if op.account_owned else op.session_id
        )
        return await send_for_its_account(
            self.store, op, session_id, lambda: send_over(self, op, approval, session_id)
        )

    async def find_out(self) -> int:
        """Find out about the unknown outcomes that are due (outcome_probe.py)."""
        return await self.outcome_probe.probe_once()

    async def dispatch_once(self) -> int:
        return await self.dispatcher.dispatch_once()

    async def run_dispatcher(self, stop: asyncio.Event) -> None:
        await self.dispatcher.run(stop)

    async def wait_for_outcome(
        self, operation_row: int, timeout: float | None = None, request_id: int | None = None
    ) -> OperationRecord:
        """Returns once the operation is performed, not_performed, outcome_unknown, declined or
        expired, or once a send ended with new terms to decide on; dispatches meanwhile.

        With `request_id` (the caller's own request), the record is as that request's caller
        must read it: see `outcome_for_request`."""
        from poppy_tui.agent.outcome_wait import wait_for_outcome

        dispatcher = self.dispatcher
        op = await wait_for_outcome(
            self.store, dispatcher.dispatch_once, dispatcher.next_due_in, operation_row, timeout
        )
        return op if request_id is None else self.outcome_for_request(op, request_id)

    def outcome_for_request(self, op: OperationRecord, request_id: int) -> OperationRecord:
        """The operation as the caller of one request sees it (outcome_wait.outcome_for_request):
        not performed for them when the approval went with another request the Company gave the
        same operation_id (Ops 3 forbids it)."""
        from poppy_tui.agent.outcome_wait import outcome_for_request

        return outcome_for_request(self.store, op, request_id)
