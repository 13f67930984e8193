"""Operations: returning revisions, checking approvals (spec 6), at most once (spec 7).

Interface code (api.py, mcp_server.py, conversation.py) asks `OperationDesk`
what to do with a request and renders the answer its own way:

- `issue` turns a shop `Proposal` into an operation object with a revision.
- `evaluate` runs the three checks, in the spec's order of outcomes, for a
  request that carries an approval, and claims the operation if all pass.
- `perform` does the claimed work once and remembers the outcome.

Everything that decides is synchronous and runs under `shop.lock`, so check 2
("not performed, not being performed") and claiming the operation are one step
however many duplicates arrive at once.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal
from collections.abc import Callable

from poppy_tui.demo.faults import Faults, apply_summary_faults
from poppy_tui.demo.ledger import PerformedLedger
from poppy_tui.demo.shop import STORE_TZ, Action, Outcome, Proposal, Shop, ShopError
from poppy_tui.protocol.approval import Approval
from poppy_tui.protocol.jsonlimits import canonical_json
from poppy_tui.protocol.timestamps import format_rfc3339, utcnow


@dataclass(frozen=True)
class IssuedRevision:
    operation_id: str
    revision: str
    session_id: str
    channel: str  # which request returned it: "api:POST /api/...", "mcp:exchange_item", "conversation:cnv_..."
    content: str  # canonical summary + terms: what "asks exactly what it describes" compares
    expires_at: datetime
    action: Action
    operation: dict[str, Any]


@dataclass
class PerformedRecord:
    operation_id: str
    revision: str
    session_id: str
    channel: str
    started_at: datetime
    outcome: Outcome | None = None

    @property
    def finished(self) -> bool:
        return self.outcome is not None


@dataclass(frozen=True)
class AsIfNoApproval:
    """Check 1 failed: the Session can't approve this operation."""

    reason: str


@dataclass(frozen=True)
class Replay:
    """Check 2: performed already; answer as the first time."""

    record: PerformedRecord


@dataclass(frozen=True)
class InProgress:
    """Check 2: being performed right now; 503 + Retry-After, never a failure."""

    record: PerformedRecord


@dataclass(frozen=True)
class Renew:
    """Check 3 failed: perform nothing, return the operation for what the request asks."""

    proposal: Proposal
    reason: str


@dataclass(frozen=True)
class Perform:
    """Every check passed and the operation is claimed: perform it now."""

    proposal: Proposal
    record: PerformedRecord


Decision = AsIfNoApproval | Replay | InProgress | Renew | Perform


@dataclass(frozen=True)
class Answer:
    """What an API request or tool call gets, before the interface renders it."""

    kind: Literal["approval_required", "performed", "replayed", "in_progress"]
    operation_id: str
    operation: dict[str, Any] | None = None  # approval_required
    short: str = ""  # approval_required: the proposal's short clause, for MCP's text
    outcome: Outcome | None = None  # performed, replayed
    record: PerformedRecord | None = None  # in_progress


class OperationDesk:
    """`session_id` arguments name the operation's owner (Ops 3): the Session for a
    signed-out request, the account (for that agent and User) for a signed-in one
    (`accounts.guard.Caller.owner`)."""

    def __init__(
        self,
        shop: Shop,
        faults: Faults,
        expiry_seconds: float,
        ledger: PerformedLedger | None = None,
    ) -> None:
        self.shop = shop
        self.faults = faults
        self.expiry_seconds = faults.expiry if faults.expiry is not None else expiry_seconds
        self._secret = secrets.token_bytes(32)
        self._issued: dict[str, IssuedRevision] = {}
        self._sessions: dict[str, set[str]] = {}  # operation_id -> owners it was returned to
        self._performed: dict[str, PerformedRecord] = {}
        self.ledger = ledger
        if ledger is not None:  # what was performed before a restart stays performed
            with self.lock:
                for op_id, revision, owner, channel, started_at, outcome, action in ledger.load():
                    self._performed[op_id] = PerformedRecord(
                        op_id, revision, owner, channel, started_at, outcome
                    )
                    shop.reapply(action, op_id)

    @property
    def lock(self):  # one lock for shop and ledger: decisions see one consistent state
        return self.shop.lock

    # ----- returning operations ----------------------------------------------

    def issue(
        self, proposal: Proposal, session_id: str, channel: str, avoid: str | None = None
    ) -> dict[str, Any]:
        """The operation object for this proposal, returned in `session_id` through `channel`."""
        now = utcnow()
        if self.faults.expired:
            expires_at = now.replace(microsecond=0) - timedelta(minutes=1)
        else:
            # Rounded up to the whole second RFC 3339 shows, so the User gets at least the full expiry.
            expires_at = now + timedelta(seconds=max(1.0, self.expiry_seconds))
            if expires_at.microsecond:
                expires_at = expires_at.replace(microsecond=0) + timedelta(seconds=1)
        expires_text = format_rfc3339(expires_at.astimezone(STORE_TZ))
        summary = apply_summary_faults(proposal.summary, self.faults)
        content = canonical_json({"summary": summary, "terms": proposal.terms})
        with self.lock:
            salt = 0
            while True:
                revision = self._revision(
                    proposal.operation_id,
                    session_id,
                    channel,
                    content,
                    expires_text,
                    expires_at,
                    salt,
                )
                known = self._issued.get(revision)
                # Never two term sets under one revision, and never the revision an approval named.
                if revision != avoid and (
                    known is None
                    or (known.content, known.session_id, known.channel)
                    == (content, session_id, channel)
                ):
                    break
                salt += 1
            operation = {
                "operation_id": proposal.operation_id,
                "revision": revision,
                "summary": summary,
                "terms": dict(proposal.terms),
                "expires_at": expires_text,
            }
            self._prune(now)
            self._issued[revision] = IssuedRevision(
                proposal.operation_id,
                revision,
                session_id,
                channel,
                content,
                expires_at,
                proposal.action,
                operation,
            )
            self._sessions.setdefault(proposal.operation_id, set()).add(session_id)
        return operation

    def _revision(
        self,
        op_id: str,
        session_id: str,
        channel: str,
        content: str,
        expires_text: str,
        expires_at: datetime,
        salt: int,
    ) -> str:
        # Same shape as the spec's "1791487200-k3Jd9Qx2mW8v": expiry, then a MAC of
        # everything the revision stands for, so different terms get different revisions.
        material = canonical_json(
            [op_id, session_id, channel, content, expires_text, salt]
        ).encode()
        mac = hmac.new(self._secret, material, hashlib.sha256).digest()
        return f"{int(expires_at.timestamp())}-{base64.urlsafe_b64encode(mac).decode()[:12]}"

    def _prune(self, now: datetime) -> None:
        # Unperformed revisions may be forgotten once expired (a day's grace keeps
        # "expired" distinguishable from "unknown" in a demo session).
        if len(self._issued) < 512:
            return
        cutoff = now - timedelta(days=1)
        for revision in [r for r, rec in self._issued.items() if rec.expires_at < cutoff]:
            del self._issued[revision]

    # ----- checking approvals ------------------------------------------------

    def evaluate(
        self,
        approval: Approval,
        session_id: str,
        channel: str,
        compute: Callable[[], Proposal],
        current_revision: str | None = None,
    ) -> Decision:
        """Checks 1-3 of spec 6, answered as the first failing one says.

        `compute` is the shop's proposal for what this request asks, now; it may
        raise ShopError (nothing to approve any more), which the caller reports.
        `current_revision`: in a conversation, only its latest revision of the
        operation is what the conversation asks for.
        """
        now = utcnow()
        op_id = approval.operation_id
        with self.lock:
            record = self._performed.get(op_id)
            if not self._returned_to(op_id, session_id):
                return AsIfNoApproval(f"operation {op_id} was not returned in this Session")
            if record is not None:
                return Replay(record) if record.finished else InProgress(record)
            proposal = compute()
            issued = self._issued.get(approval.revision)
            reason = self._check3(
                issued, approval, proposal, session_id, channel, now, current_revision
            )
            if reason:
                return Renew(proposal, reason)
            assert issued is not None
            record = PerformedRecord(op_id, approval.revision, session_id, channel, now)
            self._performed[op_id] = record
            return Perform(proposal, record)

    def _check3(
        self,
        issued: IssuedRevision | None,
        approval: Approval,
        proposal: Proposal,
        session_id: str,
        channel: str,
        now: datetime,
        current_revision: str | None,
    ) -> str | None:
        if issued is None or issued.operation_id != approval.operation_id:
            return "the revision is not one returned for this operation"
        if issued.session_id != session_id:
            return "the revision was returned in another Session"
        if issued.channel != channel:
            return "the revision was returned for another request"
        if now > issued.expires_at:
            return "the revision has expired"
        if proposal.operation_id != issued.operation_id:
            return "the request is for another operation"
        if current_revision is not None and current_revision != approval.revision:
            return "a newer revision replaced this one"
        if (
            canonical_json(
                {
                    "summary": apply_summary_faults(proposal.summary, self.faults),
                    "terms": proposal.terms,
                }
            )
            != issued.content
        ):
            return "the request asks for something other than the revision describes"
        return None

    def issued(self, revision: str) -> IssuedRevision | None:
        with self.lock:
            return self._issued.get(revision)

    def _returned_to(self, operation_id: str, session_id: str) -> bool:
        """Check 1 (Ops 6): the operation was returned to this owner, so it may approve it."""
        record = self._performed.get(operation_id)
        return session_id in self._sessions.get(operation_id, ()) or (
            record is not None and record.session_id == session_id
        )

    def in_progress(self, operation_id: str, session_id: str | None = None) -> bool:
        """Whether the operation is being performed; with `session_id`, only for an owner that
        may approve it (check 1 comes first: to anyone else it is a request without approval)."""
        with self.lock:
            record = self._performed.get(operation_id)
            if session_id is not None and not self._returned_to(operation_id, session_id):
                return False
            return record is not None and not record.finished

    def record(self, operation_id: str) -> PerformedRecord | None:
        with self.lock:
            return self._performed.get(operation_id)

    async def answer(
        self, action: Action, approval: Approval | None, session_id: str, channel: str
    ) -> Answer:
        """The whole flow for a request whose action needs approval. May raise ShopError."""
        if approval is not None:
            decision = self.evaluate(
                approval, session_id, channel, lambda: self.shop.propose(action)
            )
            if isinstance(decision, Replay):
                return Answer(
                    "replayed", decision.record.operation_id, outcome=decision.record.outcome
                )
            if isinstance(decision, InProgress):
                return Answer("in_progress", decision.record.operation_id, record=decision.record)
            if isinstance(decision, Renew):
                operation = self.issue(
                    decision.proposal, session_id, channel, avoid=approval.revision
                )
                return Answer(
                    "approval_required",
                    decision.proposal.operation_id,
                    operation=operation,
                    short=decision.proposal.short,
                )
            if isinstance(decision, Perform):
                outcome = await self.perform(decision)
                return Answer("performed", decision.proposal.operation_id, outcome=outcome)
            # AsIfNoApproval: carry on as a request without one.
        with self.lock:
            proposal = self.shop.propose(action)
        operation = self.issue(
            proposal, session_id, channel, avoid=approval.revision if approval else None
        )
        return Answer(
            "approval_required", proposal.operation_id, operation=operation, short=proposal.short
        )

    # ----- performing --------------------------------------------------------

    async def perform(self, decision: Perform) -> Outcome:
        """Perform a claimed operation once. Raises ShopError if the shop refuses after all.

        The work is shielded from the request: like a real back end, it carries on
        when the client gives up, so a retry meets "being performed" or the replay.
        """
        task = asyncio.ensure_future(self._perform(decision))
        task.add_done_callback(
            lambda t: t.cancelled() or t.exception()
        )  # no "never retrieved" noise
        return await asyncio.shield(task)

    async def _perform(self, decision: Perform) -> Outcome:
        record = decision.record
        try:
            if self.faults.perform_seconds:
                await asyncio.sleep(self.faults.perform_seconds)
            with self.lock:
                outcome = self.shop.perform(decision.proposal)
                if self.ledger is not None:
                    # Durable before anyone is told it was performed.
                    self.ledger.record(
                        record.operation_id,
                        record.revision,
                        record.session_id,
                        record.channel,
                        record.started_at,
                        outcome,
                        decision.proposal.action,
                    )
                record.outcome = outcome
        except BaseException:
            # Not performed (the shop refused, or the server is stopping before the
            # change): release the claim so a retry is judged afresh.
            with self.lock:
                if record.outcome is None and self._performed.get(record.operation_id) is record:
                    del self._performed[record.operation_id]
            raise
        return outcome

    async def wait_finished(
        self, record: PerformedRecord, poll_seconds: float = 0.05
    ) -> Outcome | None:
        """The outcome once performing ends, or None if it ended without performing.

        Polls rather than awaiting an asyncio.Event: the ledger outlives any one event
        loop (a Company restarted on the same state serves from a new loop).
        """
        while True:
            with self.lock:
                if record.outcome is not None:
                    return record.outcome
                if self._performed.get(record.operation_id) is not record:
                    return None
            await asyncio.sleep(poll_seconds)


__all__ = [
    "Answer",
    "AsIfNoApproval",
    "Decision",
    "InProgress",
    "IssuedRevision",
    "OperationDesk",
    "Perform",
    "PerformedRecord",
    "Renew",
    "Replay",
    "ShopError",
]
