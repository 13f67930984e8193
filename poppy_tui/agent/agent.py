"""The `Agent` facade: the only entry point the UI and CLI use to talk to Companies.

It wires the pieces together (store, Sessions, transports, dispatcher) and turns what each
interface answered into a `RequestResult` or `ConversationResult`. Every request is recorded
before it is sent, every first response after; operations are kept the moment they arrive.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal
from collections.abc import Awaitable, Callable

# Only what constructing an Agent and reading the store need is imported here: the TUI's first
# frame waits on this module. The network stack (httpx2, the transports, the dispatcher, sign-in,
# cryptography and jwt through keys and identity) is imported where first used, and the parts
# built on it are made on first use (cached properties below); so are the request types, uuid
# and hashlib, which only sending needs.
from poppy_tui.agent.config import Config, load_config
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store.status import Status

if TYPE_CHECKING:
    from poppy_tui.agent.store import CompanyRecord, OperationRecord, Store
    from poppy_tui.agent.store.reader import InboxReader
    import httpx2
    from cryptography.hazmat.primitives.asymmetric import ec

    from poppy_tui.agent import companies as discovery
    from poppy_tui.agent.dispatcher import Dispatcher
    from poppy_tui.agent.identity import AgentIdentity
    from poppy_tui.agent.outcome_probe import OutcomeProbe
    from poppy_tui.agent.resource_read import ResourceReader
    from poppy_tui.agent.store.resource_reads import ResourceRead
    from poppy_tui.agent.sessions import Sessions
    from poppy_tui.agent.signin.identity import ClientIdentity
    from poppy_tui.agent.signin.service import SignIns
    from poppy_tui.agent.transports import Exchange
    from poppy_tui.agent.transports.api import ApiTransport
    from poppy_tui.agent.transports.conversation import Conversations
    from poppy_tui.protocol.approval import Approval
    from poppy_tui.protocol.challenges import Challenge
    from poppy_tui.protocol.retry import BackoffPolicy

# Statuses wait_for_outcome returns on: the send is over, or the person said no.
SETTLED = frozenset(
    {
        Status.PERFORMED,
        Status.NOT_PERFORMED,
        Status.OUTCOME_UNKNOWN,
        Status.DECLINED,
        Status.EXPIRED,
    }
)
# A first request (no approval yet) is resent on its own only when that is safe: it never
# left (NotSent), or the Company asked us to wait briefly and the request is idempotent
# (a GET, or a write carrying its Idempotency-Key).
FIRST_REQUEST_SENDS = 3
FIRST_REQUEST_MAX_WAIT = 5.0


class AgentError(RuntimeError):
    """Something the person asked for can't be done (no such interface, a bad URL, ...)."""

    def __init__(self, message: str, challenge: Challenge | None = None) -> None:
        super().__init__(message)
        self.challenge = (
            challenge  # set when the Company asked for sign-in (or refused our identity)
        )


class ApprovalUnsignable(AgentError):
    """An approval can't be given: nothing could send it, as requests can't be signed here."""


@dataclass(frozen=True)
class RequestResult:
    outcome: Literal["performed", "operation", "not_performed", "unknown"]
    status: int | None  # HTTP status where there is one
    body: Any  # parsed JSON body / tool result (wire names) / conversation reply
    operation_row: int | None  # the stored operation when outcome == "operation"
    detail: str = ""
    request_id: int | None = None
    challenge: Challenge | None = (
        None  # sign in (or more scopes) to go on, or the Company refused our identity
    )
    # The stored revision the answer carried, when outcome == "operation": what an approval of
    # these terms names (Store.approve refuses it once a newer revision has arrived).
    revision_row: int | None = None


@dataclass(frozen=True)
class ConversationResult:
    conversation_row: int
    conversation_id: str
    messages: list[dict]  # Company messages received in answer, as sent (unsanitised)
    operation_rows: list[int]  # operations (or new revisions) those messages carried
    delivered: bool = True  # False when our message could not be delivered (see detail)
    detail: str = ""
    problems: list[str] = field(default_factory=list)
    challenge: Challenge | None = None  # an `authorization` event, or a challenge to our message
    request_id: int | None = None  # our message, as a stored request (see outcome_for_request)


class Agent:
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
        self._identity: AgentIdentity | None = None
        self._mcp: Any = None
        # Sign-in (spec 5.4): the access token a signed-in request carries, or None when signed
        # out. Unset means sign-in's own (self.signins.access_token); tests assign their own.
        self._access_token_source: Any = Agent._UNSET
        # Reads of arriving operations' resources (resource_read.py), running as tasks.
        self._resource_reads: set[asyncio.Task] = set()

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

    def _key_loader(self) -> ec.EllipticCurvePrivateKey:
        if self._key is not None:
            return self._key
        from poppy_tui.agent.keys import load_or_create_key

        return load_or_create_key(self.paths, self.config)

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
        from poppy_tui.agent.dispatcher import DEFAULT_LEASE_SECONDS, Dispatcher
        from poppy_tui.agent.outcome_probe import FIRST_PROBE_SECONDS

        lease = self._lease_seconds if self._lease_seconds is not None else DEFAULT_LEASE_SECONDS
        dispatcher = Dispatcher(
            self.store,
            self._send_approval,
            self.config,
            self._owner,
            lease,
            self._backoff,
            preflight=self.signing_problem,
            prober=self._find_out,
            probe_after=FIRST_PROBE_SECONDS,
            signable=self.signing_key_loaded,
        )
        dispatcher.sign_in_state = self._sign_in_state
        dispatcher.token_refused = self._token_refused
        return dispatcher

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
        from poppy_tui.agent.dispatcher import DEFAULT_LEASE_SECONDS
        from poppy_tui.agent.outcome_probe import OutcomeProbe

        lease = self._lease_seconds if self._lease_seconds is not None else DEFAULT_LEASE_SECONDS
        return OutcomeProbe(self, self._send_approval, self.dispatcher.owner, lease)

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

    def _read_resource_soon(self, operation_row: int) -> None:
        """A task, so the answer to the request that returned the operation never waits for it."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        task = loop.create_task(self.read_resource(operation_row))
        self._resource_reads.add(task)
        task.add_done_callback(self._resource_read_done)

    async def settle_resource_reads(self, timeout: float) -> None:
        """Wait up to `timeout` for the reads started on arrival, then stop what is left."""
        pending = list(self._resource_reads)
        if not pending:
            return
        _, late = await asyncio.wait(pending, timeout=timeout)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late, timeout=1.0)

    def _resource_read_done(self, task: asyncio.Task) -> None:
        self._resource_reads.discard(task)
        if not task.cancelled() and task.exception() is not None:
            import logging

            logging.getLogger(__name__).warning("reading a resource failed: %s", task.exception())

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

    def _client_identity(self) -> ClientIdentity:
        """Who the agent is at a Company's authorization server: its identity (spec 4.1)."""
        return self.identity

    async def _access_token(self, company: CompanyRecord) -> str | None:
        """`access_token_source`'s answer: the token a signed-in request carries, or None."""
        source = self.access_token_source
        return None if source is None else await source(company)

    async def _sign_in_state(self, company: CompanyRecord) -> str | None:
        """A fingerprint of the access token now (never the token itself), or None signed out."""
        from poppy_tui.agent.transports import carried

        return carried(
            await self.sessions.access_token(company)
        )  # as the transports name a sent token

    async def _token_refused(self, company: CompanyRecord, fingerprint: str | None) -> None:
        """The Company answered the access token with this fingerprint with 401 invalid_token."""
        source = self._access_token_source
        ours = source is Agent._UNSET or (
            "signins" in self.__dict__
            and getattr(source, "__self__", None) is self.__dict__["signins"]
        )
        if not ours:
            return  # a token source of the caller's own (a test, an embedding program): theirs to renew
        await self.signins.token_refused(company, fingerprint)

    async def _notice_refused_token(self, company: CompanyRecord, exchange: Exchange) -> None:
        """A first request whose access token the Company refused (invalid_token): the sign-in is
        renewed or ended now, so `signin` and the Companies screen tell the truth."""
        from poppy_tui.protocol.challenges import INVALID_TOKEN

        challenge = exchange.challenge
        refused = exchange.token_fingerprint  # the token the request carried, not the one held now
        if challenge is not None and challenge.error == INVALID_TOKEN and refused is not None:
            await self._token_refused(company, refused)

    def signing_key(self) -> ec.EllipticCurvePrivateKey:
        """Load (or create) the signing key now, so a missing keyring is reported up front."""
        return self.identity.key

    @property
    def identity(self) -> AgentIdentity:
        """Who this agent is to Companies (spec 4.1). Read from identity.json on first use; a
        development identity (loopback client_id) is served on 127.0.0.1 from then on."""
        if self._identity is None:
            from poppy_tui.agent.identity import load_identity

            self._identity = load_identity(self.paths, self.config.allow_loopback, self._key_loader)
        return self._identity

    def signing_key_loaded(self) -> bool:
        """Whether the signing key is loaded (it is kept from then on), known without touching
        the keyring: an agent that only browses never loads it."""
        return self._identity is not None and self._identity.key_loaded

    def signing_problem(self) -> str | None:
        """Why requests (approvals included) can't be signed on this machine, with the fix; or None.
        Loads the key (once: it is kept after the first success)."""
        if self.signing_key_loaded():
            return None  # asked before every send: once loaded, nothing more to look at
        from poppy_tui.agent.keys import KeyStorageError
        from poppy_tui.protocol.client_metadata import IdentityError

        try:
            self.signing_key()
        except (KeyStorageError, IdentityError) as exc:
            # No key, or no identity (identity.json unreadable, or none and no loopback allowed).
            return str(exc)
        return None

    def startup_signing_problem(self) -> str | None:
        """signing_problem without touching the secret when the keyring can be judged by its
        backend alone: for a warning when the TUI starts, which must not wait on a keyring prompt."""
        from poppy_tui.agent.keys import KeyStorageError, keyring_problem, storage_mode

        try:
            if storage_mode(self.config) == "keyring" and keyring_problem() is None:
                return None  # a usable backend; the secret itself is read at the first approval
        except KeyStorageError as exc:
            return str(exc)
        # An unusable backend is refused before any secret is touched; a key file is cheap to read.
        return self.signing_problem()

    # ---- Companies -----------------------------------------------------------------------------

    async def add_company(self, domain_or_url: str) -> CompanyRecord:
        from poppy_tui.agent import companies as discovery

        return await discovery.discover(
            await self._http(), self.store, domain_or_url, self.config.allow_loopback
        )

    async def refresh_company(
        self, company: CompanyRecord, force: bool = False
    ) -> discovery.Refreshed:
        """poppy.json brought up to date as its HTTP caching allows (`force`: ask now, conditionally)."""
        from poppy_tui.agent import companies as discovery

        return await discovery.refresh(
            await self._http(),
            self.store,
            self.store.get_company(company.id),
            self.config.allow_loopback,
            force,
        )

    async def _fresh(self, company: CompanyRecord) -> CompanyRecord:
        """The Company with an up-to-date poppy.json, read before a new request decides whether to
        declare the operations extension. A failed refresh keeps the stored copy."""
        return (await self.refresh_company(company)).company

    def remove_company(self, company: CompanyRecord) -> CompanyRecord:
        return self.store.remove_company(company.id)

    def match_companies(self, key: str) -> list[CompanyRecord]:
        """Every Company `key` (name, domain, URL) could mean: one, none, or several (ambiguous)."""
        from poppy_tui.agent import companies as discovery

        text = key.strip()
        found = self.store.match_companies(text)
        if not found and "://" in text:
            found = self.store.match_companies(discovery.origin_of(text))
        return found

    def find_company(self, key: str) -> CompanyRecord | None:
        found = self.match_companies(key)
        return found[0] if len(found) == 1 else None

    async def fetch_openapi(self, company: CompanyRecord) -> dict:
        from poppy_tui.agent import companies as discovery

        return await discovery.fetch_openapi(
            await self._http(), company, self.config.allow_loopback, self.sessions.headers(company)
        )

    async def list_tools(self, company: CompanyRecord) -> list[dict]:
        from poppy_tui.agent import companies as discovery

        url = discovery.mcp_url(company)
        if url is None:
            raise AgentError(f"{company.name} lists no MCP server in its poppy.json")
        try:
            return await self.mcp.list_tools(self.store.get_company(company.id), url)
        except RuntimeError as exc:
            raise AgentError(str(exc)) from None

    # ---- requests --------------------------------------------------------------------------------

    async def call_api(
        self,
        company: CompanyRecord,
        method: str,
        path_or_url: str,
        body: Any = None,
        origin: str = "cli",
    ) -> RequestResult:
        from poppy_tui.agent import companies as discovery

        company = await self._fresh(company)
        try:
            url = discovery.resolve_api_url(company, path_or_url, self.config.allow_loopback)
        except ValueError as exc:
            raise AgentError(str(exc)) from None
        from poppy_tui.protocol.requests import ApiRequest

        request = ApiRequest(method=method.upper(), url=url, body=body)
        request_id = self.store.add_request(company.id, request, origin)
        # The first request's own key; the approval's resend gets another (Ops 6).
        from poppy_tui.agent.transports.api import WRITE_METHODS

        import uuid

        key = str(uuid.uuid4()) if request.method in WRITE_METHODS else None
        idempotent = key is not None or request.method in ("GET", "HEAD", "OPTIONS")
        declared = self.sessions.declares_operations(company)
        exchange = await self._first_request(
            lambda c: self.api.send(c, request, session_id=c.session_id, idempotency_key=key),
            company,
            idempotent,
        )
        await self._notice_refused_token(company, exchange)
        company = await self._recheck_after(exchange, company)
        return self._result(company, request_id, exchange, "api", declared)

    async def call_tool(
        self, company: CompanyRecord, tool: str, arguments: dict | None = None, origin: str = "cli"
    ) -> RequestResult:
        from poppy_tui.agent import companies as discovery

        company = await self._fresh(company)
        url = discovery.mcp_url(company)
        if url is None:
            raise AgentError(f"{company.name} lists no MCP server in its poppy.json")
        from poppy_tui.protocol.requests import McpRequest

        request = McpRequest(server_url=url, tool=tool, arguments=dict(arguments or {}))
        request_id = self.store.add_request(company.id, request, origin)
        declared = self.sessions.declares_operations(company)
        exchange = await self._first_request(
            lambda c: self.mcp.call(c, url, tool, request.arguments, session_id=c.session_id),
            company,
            False,
        )
        await self._notice_refused_token(company, exchange)
        company = await self._recheck_after(exchange, company)
        return self._result(company, request_id, exchange, "mcp", declared)

    async def _recheck_after(self, exchange: Exchange, company: CompanyRecord) -> CompanyRecord:
        """After `extension_required`, read poppy.json again now (conditionally): the copy that
        decided what to declare may be out of date, and the explanation should say so."""
        from poppy_tui.protocol.outcomes import NotPerformed

        outcome = exchange.outcome
        if isinstance(outcome, NotPerformed) and outcome.error == "extension_required":
            return (await self.refresh_company(company, force=True)).company
        return company

    async def _first_request(self, send, company: CompanyRecord, idempotent: bool) -> Exchange:
        from poppy_tui.protocol.outcomes import NotSent, RetryLater

        exchange: Exchange | None = None
        for number in range(1, FIRST_REQUEST_SENDS + 1):
            # Read again before a resend: another process may have started a new Session meanwhile.
            exchange = await send(company if number == 1 else self.store.get_company(company.id))
            outcome = exchange.outcome
            again = isinstance(outcome, NotSent) or (
                idempotent
                and isinstance(outcome, RetryLater)
                and (outcome.retry_after or 0) <= FIRST_REQUEST_MAX_WAIT
            )
            if not again or number == FIRST_REQUEST_SENDS:
                return exchange
            retry_after = outcome.retry_after if isinstance(outcome, RetryLater) else None
            await asyncio.sleep(
                min(self.dispatcher._backoff.delay(number, retry_after), FIRST_REQUEST_MAX_WAIT)
            )
        assert exchange is not None
        return exchange

    def _result(
        self,
        company: CompanyRecord,
        request_id: int,
        exchange: Exchange,
        interface: str,
        declared: bool | None = None,
    ) -> RequestResult:
        from poppy_tui.protocol.outcomes import (
            ApprovalRequired,
            BadResponse,
            NotPerformed,
            NotSent,
            Performed,
            RetryLater,
            Unknown,
        )
        from poppy_tui.agent import companies as discovery

        outcome = exchange.outcome
        if not isinstance(outcome, ApprovalRequired):  # else kept with the operation, in one commit
            self.store.set_first_response(request_id, exchange.status, exchange.response)
        body = (
            exchange.response.get("body")
            if interface == "api" and isinstance(exchange.response, dict)
            else exchange.response
        )
        if isinstance(outcome, Performed):
            return RequestResult(
                "performed", exchange.status, body, None, exchange.detail, request_id
            )
        if isinstance(outcome, ApprovalRequired):
            recorded = self.store.record_operation(
                company.id,
                request_id,
                exchange.session_id,
                outcome.operation,
                exchange.carrier_text,
                interface,
                first_response=(exchange.status, exchange.response),
                account_owned=exchange.signed_in,
                account=exchange.account if exchange.signed_in else None,
            )
            detail = "the Company needs the person's approval before it does this"
            self._read_resource_soon(recorded.operation_row)
            if not recorded.new_operation:
                # As this request's caller must read it: another request's outcome is not theirs.
                stored = self.store.get_operation(recorded.operation_row)
                current = self.outcome_for_request(stored, request_id)
                if current is not stored:
                    detail = current.outcome_detail or detail
                elif current.status not in (Status.PENDING, Status.WITHDRAWN):
                    detail = f"this operation is already {current.status.value}"
            return RequestResult(
                "operation",
                exchange.status,
                body,
                recorded.operation_row,
                detail,
                request_id,
                revision_row=recorded.revision_id,
            )
        if isinstance(outcome, RetryLater):
            wait = (
                f", retry after {outcome.retry_after:g}s" if outcome.retry_after is not None else ""
            )
            return RequestResult(
                "unknown",
                exchange.status,
                body,
                None,
                f"the Company is busy or still working on it ({outcome.detail}{wait})",
                request_id,
            )
        if isinstance(outcome, Unknown):
            return RequestResult(
                "unknown",
                exchange.status,
                body,
                None,
                f"no complete answer ({outcome.detail}); the Company may have acted on it",
                request_id,
            )
        if isinstance(outcome, NotSent):
            return RequestResult(
                "not_performed", None, None, None, f"not delivered: {outcome.detail}", request_id
            )
        if isinstance(outcome, NotPerformed) and outcome.error == "extension_required":
            if declared is None:
                declared = self.sessions.declares_operations(company)
            detail = discovery.explain_extension_required(company, outcome.body, declared)
            return RequestResult("not_performed", exchange.status, body, None, detail, request_id)
        if isinstance(outcome, NotPerformed):
            detail = exchange.detail or f"the Company refused it ({outcome.error})"
            return RequestResult(
                "not_performed", exchange.status, body, None, detail, request_id, exchange.challenge
            )
        assert isinstance(outcome, BadResponse)
        if outcome.success:
            # A success status with an operation in it: not "performed" (Ops 5), not an operation
            # to approve either (Ops 4 carries one only in a refusal); whether it was done is unclear.
            return RequestResult(
                "unknown",
                exchange.status,
                body,
                None,
                f"{outcome.error}; check with the Company whether it was done before asking again",
                request_id,
            )
        return RequestResult(
            "not_performed",
            exchange.status,
            body,
            None,
            f"the Company's answer can't be used: {outcome.error}",
            request_id,
        )

    # ---- conversations ---------------------------------------------------------------------------

    async def say(
        self,
        company: CompanyRecord,
        text: str,
        conversation_row: int | None = None,
        origin: str = "cli",
    ) -> ConversationResult:
        from poppy_tui.protocol.outcomes import NotPerformed
        from poppy_tui.agent import companies as discovery

        company = await self._fresh(company)
        if not text.strip():
            raise AgentError("there is nothing to say")
        endpoint = discovery.conversation_endpoint(company)
        if conversation_row is not None:
            _, owner_company, endpoint, _, _ = self.store.get_conversation(conversation_row)
            if owner_company != company.id:
                raise AgentError("that conversation is with another Company")
        if endpoint is None:
            raise AgentError(f"{company.name} offers no conversations in its poppy.json")
        declared = self.sessions.declares_operations(company)
        said = await self.conversations.say(company, endpoint, text, conversation_row, origin)
        await self._notice_refused_token(company, said.exchange)
        why = said.exchange.detail or _short(said.exchange)
        outcome = said.exchange.outcome
        if isinstance(outcome, NotPerformed) and outcome.error == "extension_required":
            company = await self._recheck_after(said.exchange, company)
            why = discovery.explain_extension_required(company, outcome.body, declared)
        if said.conversation_row is None:
            raise AgentError(
                f"{company.name} did not start the conversation: {why}", said.exchange.challenge
            )
        detail = "" if said.delivered else f"the message was not delivered: {why}"
        for row in said.ingested.operation_rows:
            self._read_resource_soon(row)
        challenge = said.exchange.challenge or next(iter(said.ingested.challenges), None)
        return ConversationResult(
            said.conversation_row,
            said.conversation_id or "",
            said.ingested.messages,
            said.ingested.operation_rows,
            said.delivered,
            detail,
            said.ingested.problems,
            challenge,
            said.request_id,
        )

    async def refresh_conversation(self, conversation_row: int) -> ConversationResult:
        _, company_id, _, conversation_id, _ = self.store.get_conversation(conversation_row)
        company = self.store.get_company(company_id)
        got = await self.conversations.read(company, conversation_row)
        return ConversationResult(
            conversation_row,
            conversation_id,
            got.messages,
            got.operation_rows,
            True,
            "; ".join(got.problems),
            got.problems,
            next(iter(got.challenges), None),
        )

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

    # ---- sending ---------------------------------------------------------------------------------

    async def _send_approval(self, op: OperationRecord, approval: Approval) -> Exchange:
        from poppy_tui.agent.account_hold import send_for_its_account

        # An operation returned signed out can be approved only in its own Session; one returned
        # signed in is the account's, approved from the agent's current Session (Ops 3), and only
        # with a token of that account (account_hold.py).
        session_id = (
            self.store.get_company(op.company.id).session_id if op.account_owned else op.session_id
        )
        return await send_for_its_account(
            self.store, op, session_id, lambda: self._send_over(op, approval, session_id)
        )

    async def _send_over(
        self, op: OperationRecord, approval: Approval, session_id: str
    ) -> Exchange:
        from poppy_tui.protocol.outcomes import NotPerformed
        from poppy_tui.protocol.requests import ApiRequest, ConversationRequest, McpRequest

        # `op.request` is the request that returned the approved revision (the dispatcher sees
        # to it); its type says which interface the approval goes through (Ops 6).
        request = op.request
        if isinstance(request, ApiRequest):
            return await self.api.send(
                op.company,
                request,
                session_id=session_id,
                approval=approval,
                idempotency_key=op.idempotency_key,
                account_owned=op.account_owned,
            )
        if isinstance(request, McpRequest):
            return await self.mcp.call(
                op.company,
                request.server_url,
                request.tool,
                request.arguments,
                session_id=session_id,
                approval=approval,
                account_owned=op.account_owned,
            )
        if isinstance(request, ConversationRequest):
            return await self.conversations.send_approval(op, approval)
        from poppy_tui.agent.transports import Exchange

        detail = f"poppy-tui can't send an approval over {request.interface!r}"
        return Exchange(
            NotPerformed(None, "unsupported_interface", None),
            None,
            {"error": detail},
            op.session_id,
            detail,
        )

    async def _find_out(self) -> int:
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
        op = await self._wait_for_outcome(operation_row, timeout)
        return op if request_id is None else self.outcome_for_request(op, request_id)

    def outcome_for_request(self, op: OperationRecord, request_id: int) -> OperationRecord:
        """The operation as the caller of one request sees it. When the Company reused the
        operation_id for a different request (which Ops §3 forbids) and the approved revision
        answered that other request, what was performed is not what this caller asked for:
        for them it is not performed, and the other request's answer is not theirs to print."""
        if op.approved_revision_id is None or op.status not in SETTLED:
            return op
        requests = {
            rev_id: (q_id, request)
            for rev_id, _, q_id, request in self.store.revision_requests(op.id)
        }
        approved = requests.get(op.approved_revision_id)
        if approved is None or approved[0] == request_id:
            return op
        try:
            mine, _, _ = self.store.get_request(request_id)
        except KeyError:
            return op
        # Here, not at the top: it loads the sanitiser (and regex), which `call` never needs.
        from poppy_tui.safety.request_reuse import describe_request, different_requests

        if not different_requests(mine, approved[1]):
            return op  # the same action through another request (another interface, say)
        return dataclasses.replace(
            op,
            status=Status.NOT_PERFORMED,
            outcome=None,
            outcome_detail=(
                f"the approval went with a different request that the Company gave the same operation_id "
                f"({describe_request(approved[1])}); your request ({describe_request(mine)}) was not performed "
                f"by it (the other request is {op.status.value})"
            ),
        )

    async def _wait_for_outcome(self, operation_row: int, timeout: float | None) -> OperationRecord:
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        attempts_seen = len(self.store.attempts(operation_row))
        while True:
            op = self.store.get_operation(operation_row)
            if op.status in SETTLED:
                return op
            if (
                op.status == Status.PENDING
                and len(self.store.attempts(operation_row)) > attempts_seen
            ):
                return op  # a send answered with new terms: the person has to decide again
            if op.waiting_sign_in and len(self.store.attempts(operation_row)) > attempts_seen:
                return op  # a send met a sign-in challenge: the person has to sign in first
            if deadline is not None and loop.time() >= deadline:
                return op
            await self.dispatch_once()
            op = self.store.get_operation(operation_row)
            if op.status in SETTLED:
                return op
            due = self.dispatcher.next_due_in()
            pause = 0.25 if due is None else min(0.25, max(0.02, due))
            if deadline is not None:
                pause = min(pause, max(0.0, deadline - loop.time()))
            await asyncio.sleep(pause)


def _short(exchange: Exchange) -> str:
    outcome = exchange.outcome
    for name in ("detail", "error"):
        value = getattr(outcome, name, None)
        if value:
            return str(value)
    return type(outcome).__name__
