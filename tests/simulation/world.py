"""What the simulated Company knows and decides, with no I/O: written from the operations
extension v2 text alone (no poppy_tui imports, nothing from poppy_tui/demo/).

The HTTP, MCP and conversation faces (company.py) turn each request into a call here and the
`Answer` back into bytes. Everything the Company received and did is logged (`received`,
`performs`), so the simulation's invariants rest on the Company's own ground truth.

How this Company reads the spec where it may choose:
- An action is (interface, verb, item), and in a conversation also the conversation (Ops 6
  check 3: "the operation is the conversation's"). Each interface has its own operation_ids.
- The same action asked again before it is performed gets the same operation_id; the same
  revision while its terms (the quantity) and expiry stand, else a new one ("New terms"). Once
  performed, the same action asked again is a new action (a second hold), a new operation_id.
- `mint_ids`: every request without a usable approval gets a new operation_id (Ops 7 allows it
  once the Company forgot the first; a Company may also simply not keep unperformed ones).
- `reuse_ids` (a Company bug Ops 3 forbids, which poppy-tui must survive): every API "hold"
  request gets one operation_id whatever the item, even after it was performed.
- "order" needs sign-in (its operations belong to the account); "hold" does not (signed out, its
  operations belong to the Session; signed in, to the account), Ops 3 "Who can approve it".
- Answers to approvals follow a script of `Directive`s the simulation draws (one per approval
  received, then "perform"): every answer the spec allows, and the same-revision bug.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from .sim_clock import SimClock

VERBS = ("hold", "order")
ITEMS = ("it1", "it2")
NEEDS_SIGN_IN = frozenset({"order"})
CONFIRMATION = "Yes please, go ahead"

# What the Company may do with an approval it receives (a Directive's kind):
BEFORE_PERFORMING = ("busy", "error_before", "drop_before")  # the transport failed first
AFTER_PERFORMING = ("busy_after", "error_after", "drop_after", "words_only")
DECIDING = ("perform", "refuse", "new_revision", "same_revision", "no_reply")
ASKING_SIGN_IN = ("invalid_token", "sign_in")
DIRECTIVE_KINDS = BEFORE_PERFORMING + AFTER_PERFORMING + DECIDING + ASKING_SIGN_IN


@dataclass(frozen=True)
class Directive:
    kind: str
    retry_after: int | None = None  # busy, busy_after: Retry-After seconds, or none
    status: int = 500  # error_before, error_after, drop_*: the status line sent (then dropped)


@dataclass(frozen=True)
class Asked:
    """What one request asks the Company to do."""

    interface: str  # "api" | "mcp" | "conversation"
    verb: str
    item: str
    qty: int = 1
    conversation_id: str | None = None

    @property
    def action(self) -> tuple:
        return (self.interface, self.verb, self.item, self.conversation_id)


@dataclass
class Rev:
    operation_id: str
    revision: str
    asked: Asked
    owner: tuple[str, str]  # ("account", user) or ("session", sid)
    expires_at: datetime


@dataclass
class Op:
    operation_id: str
    action: tuple
    owner: tuple[str, str]
    revisions: list[Rev] = field(default_factory=list)
    performed: dict[str, Any] | None = None  # the first answer, replayed to every retry (Ops 7)
    performed_for: Asked | None = None


@dataclass(frozen=True)
class Answer:
    """What the Company answers. kind: performed, refused, operation, challenge, invalid_token,
    busy, error, drop, words, no_reply, unhelpful (a conversation message it can't act on)."""

    kind: str
    body: dict[str, Any] | None = None  # the performed result, or the operation (Ops 3 fields)
    status: int = 200
    retry_after: int | None = None
    operation_id: str | None = None


@dataclass
class Received:
    """One request that carried an approval, as the Company saw it."""

    step: int
    at: datetime
    interface: str
    operation_id: str
    revision: str
    token: str | None
    user: str | None  # whose token carried it (None: none, or one the Company doesn't take)
    sid: str | None
    owner: tuple[str, str] | None  # whose the named revision is (None: no such revision)
    expires_at: datetime | None
    check1: str  # ok, other_account, other_session, signed_out, no_revision
    answer: str  # the Answer kind given


@dataclass
class Performed:
    step: int
    at: datetime
    operation_id: str
    asked: Asked


@dataclass
class World:
    clock: SimClock
    expiry_seconds: float = 900.0
    mint_ids: bool = False
    reuse_ids: bool = False
    script: deque[Directive] = field(default_factory=deque)
    tokens: dict[str, str] = field(default_factory=dict)  # access token -> user
    revoked: set[str] = field(default_factory=set)
    ops: dict[str, Op] = field(default_factory=dict)
    revisions: dict[tuple[str, str], Rev] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    # operation_id -> the tokens of the requests it was returned to (its own sign-ins' tokens)
    returned_with: dict[str, set[str | None]] = field(default_factory=dict)
    performs: list[Performed] = field(default_factory=list)
    conversations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    topics: dict[str, tuple[str, str]] = field(default_factory=dict)  # conversation -> (verb, item)
    answered_messages: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    step: int = 0  # the simulation's step number, stamped on what arrives
    errors: list[str] = field(default_factory=list)  # the Company's own failures (a test bug)
    # Set by the simulation to hold the next approval before (or after) it is performed, while
    # it drops the agent mid-send (company.py's gate waits on it).
    hold: Any = None
    _numbers: Any = field(default_factory=lambda: itertools.count(1))

    def number(self) -> int:
        return next(self._numbers)

    def now(self) -> datetime:
        return self.clock.now()

    # ---- tokens -------------------------------------------------------------------------------

    def issue_token(self, user: str) -> str:
        token = f"tok_{user}_{self.number()}"
        self.tokens[token] = user
        return token

    def user_of(self, token: str | None) -> tuple[str | None, bool]:
        """(user, token refused): a token the Company never issued or revoked is refused (spec 7)."""
        if token is None:
            return None, False
        if token in self.revoked or token not in self.tokens:
            return None, True
        return self.tokens[token], False

    # ---- operations ---------------------------------------------------------------------------

    def _new_op(self, asked: Asked, owner: tuple[str, str]) -> Op:
        prefix = {"api": "ap", "mcp": "mc", "conversation": "cv"}[asked.interface]
        if self.reuse_ids and asked.interface == "api" and asked.verb == "hold":
            operation_id = "ap_hold_shared"  # the bug: one operation_id for every hold request
            if operation_id in self.ops:
                return self.ops[operation_id]
        else:
            operation_id = f"{prefix}_{asked.verb}_{asked.item}_{self.number()}"
        op = Op(operation_id, asked.action, owner)
        self.ops[operation_id] = op
        return op

    def _open_op(self, asked: Asked, owner: tuple[str, str]) -> Op | None:
        if self.mint_ids:
            return None
        if self.reuse_ids and asked.interface == "api" and asked.verb == "hold":
            return self.ops.get("ap_hold_shared")
        for op in reversed(self.ops.values()):
            if op.action == asked.action and op.owner == owner and op.performed is None:
                return op
        return None

    def _new_revision(self, op: Op, asked: Asked) -> Rev:
        rev = Rev(
            op.operation_id,
            f"r{self.number()}",
            asked,
            op.owner,
            self.now() + timedelta(seconds=self.expiry_seconds),
        )
        op.revisions.append(rev)
        self.revisions[(op.operation_id, rev.revision)] = rev
        return rev

    def operation_for(self, asked: Asked, owner: tuple[str, str]) -> Answer:
        """A request with no usable approval: the operation to approve (Ops 4), performing nothing."""
        op = self._open_op(asked, owner) or self._new_op(asked, owner)
        latest = op.revisions[-1] if op.revisions else None
        if latest is not None and latest.asked == asked and latest.expires_at > self.now():
            return self.operation_answer(latest)
        return self.operation_answer(self._new_revision(op, asked))

    def operation_answer(self, rev: Rev) -> Answer:
        verb, item, qty = rev.asked.verb, rev.asked.item, rev.asked.qty
        return Answer(
            "operation",
            {
                "operation_id": rev.operation_id,
                "revision": rev.revision,
                "summary": f"{verb.capitalize()} {qty} of {item}, **no fee**.",
                "terms": {"action": verb, "item": item, "quantity": qty},
                "expires_at": rev.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            },
            403,
            operation_id=rev.operation_id,
        )

    def owner_of(self, user: str | None, sid: str | None) -> tuple[str, str]:
        return ("account", user) if user is not None else ("session", sid or "")

    # ---- a request -------------------------------------------------------------------------

    def first_request(self, asked: Asked, token: str | None, sid: str | None) -> Answer:
        user, refused = self.user_of(token)
        if refused:
            return Answer("invalid_token", status=401)
        if asked.verb in NEEDS_SIGN_IN and user is None:
            return Answer("challenge", status=401)
        return self._returned(self.operation_for(asked, self.owner_of(user, sid)), token)

    def _returned(self, answer: Answer, token: str | None) -> Answer:
        if answer.kind == "operation" and answer.operation_id is not None:
            self.returned_with.setdefault(answer.operation_id, set()).add(token)
        return answer

    def approval(
        self,
        asked: Asked,
        approval: tuple[str, str],
        token: str | None,
        sid: str | None,
    ) -> Answer:
        """A request carrying an approval (Ops 6, "What the Company checks"; Ops 7)."""
        directive = self.script.popleft() if self.script else Directive("perform")
        if asked.interface != "conversation" and directive.kind == "words_only":
            directive = Directive("perform")  # words are a conversation's
        if asked.interface != "conversation" and directive.kind == "no_reply":
            directive = Directive("busy")  # an API or tool that hasn't finished: 503 (Ops 7)
        rev = self.revisions.get(approval)
        user, token_refused = self.user_of(token)
        answer, check1 = self._answer_approval(
            asked, rev, directive, token, user, token_refused, sid
        )
        self.received.append(
            Received(
                self.step,
                self.now(),
                asked.interface,
                approval[0],
                approval[1],
                token,
                user,
                sid,
                rev.owner if rev is not None else None,
                rev.expires_at if rev is not None else None,
                check1,
                answer.kind,
            )
        )
        return self._returned(answer, token)

    def _check1(self, rev: Rev | None, user: str | None, sid: str | None) -> str:
        if rev is None:
            return "no_revision"
        kind, who = rev.owner
        if kind == "account":
            if user is None:
                return "signed_out"
            return "ok" if user == who else "other_account"
        return "ok" if sid == who else "other_session"

    def _answer_approval(
        self,
        asked: Asked,
        rev: Rev | None,
        directive: Directive,
        token: str | None,
        user: str | None,
        token_refused: bool,
        sid: str | None,
    ) -> tuple[Answer, str]:
        check1 = self._check1(rev, user, sid)
        kind = directive.kind
        # The transport fails before the Company looks at the request.
        if kind == "busy":
            return Answer("busy", status=503, retry_after=directive.retry_after), check1
        if kind == "error_before":
            return Answer("error", status=directive.status), check1
        if kind == "drop_before":
            return Answer("drop", status=directive.status), check1
        # Spec 7's token checks come before the operation's.
        if token_refused:
            return Answer("invalid_token", status=401), check1
        if kind == "invalid_token" and token is not None and user is not None:
            self.revoked.add(token)  # the Company revokes the sign-in
            return Answer("invalid_token", status=401), check1
        if kind in ("invalid_token", "sign_in"):
            return Answer("challenge", status=401), check1
        # Check 1: the Session can approve it; if not, handled as a request with no approval.
        if check1 == "signed_out":
            return Answer("challenge", status=401), check1
        if asked.verb in NEEDS_SIGN_IN and user is None:
            return Answer("challenge", status=401), check1
        if check1 != "ok":
            return self.operation_for(asked, self.owner_of(user, sid)), check1
        assert rev is not None
        op = self.ops[rev.operation_id]
        # Check 2: performed already: the first answer again (Ops 7).
        if op.performed is not None:
            return self._after_performing(op, kind, directive), check1
        # Check 3: a revision of this operation, not expired, for exactly what this request asks.
        if rev.expires_at <= self.now() or rev.asked != asked:
            return self.operation_for(asked, rev.owner), check1
        if kind == "refuse":
            return Answer("refused", {"error": "not_performed"}, 409), check1
        if kind == "new_revision":  # e.g. the price changed: nothing performed, new terms
            return self.operation_answer(self._new_revision(op, asked)), check1
        if kind == "same_revision":  # a Company bug Ops 6 forbids
            return self.operation_answer(rev), check1
        if kind == "no_reply":
            return Answer("no_reply", status=202), check1
        op.performed = {
            "done": asked.verb,
            "item": asked.item,
            "quantity": asked.qty,
            "operation_id": op.operation_id,
        }
        op.performed_for = asked
        self.performs.append(Performed(self.step, self.now(), op.operation_id, asked))
        return self._after_performing(op, kind, directive), check1

    def _after_performing(self, op: Op, kind: str, directive: Directive) -> Answer:
        if kind == "busy_after":  # still being performed, as far as this answer says (Ops 7)
            return Answer("busy", status=503, retry_after=directive.retry_after)
        if kind == "error_after":
            return Answer("error", status=directive.status)
        if kind == "drop_after":
            return Answer("drop", op.performed, status=200)  # the status line, then nothing
        if kind == "words_only":
            return Answer("words", op.performed, operation_id=op.operation_id)
        return Answer("performed", op.performed, 200, operation_id=op.operation_id)

    # ---- conversations ------------------------------------------------------------------------

    def new_conversation(self) -> str:
        conversation_id = f"cnv_{self.number()}"
        self.conversations[conversation_id] = []
        return conversation_id

    def conversation_asks(self, conversation_id: str, text: str) -> Asked | None:
        """What words ask for: "Please <verb> <item>" names it (and sets the conversation's topic);
        the confirmation asks for the topic. Other words ask nothing."""
        words = text.lower().split()
        topic = self.topics.get(conversation_id)
        for verb in VERBS:
            for item in ITEMS:
                if verb in words and item in words and topic in (None, (verb, item)):
                    # One action per conversation: another is asked for in a conversation of its own.
                    self.topics[conversation_id] = (verb, item)
                    return Asked("conversation", verb, item, 1, conversation_id)
        if text.strip() == CONFIRMATION and conversation_id in self.topics:
            verb, item = self.topics[conversation_id]
            return Asked("conversation", verb, item, 1, conversation_id)
        return None

    def performed_ids(self) -> set[str]:
        return {p.operation_id for p in self.performs}
