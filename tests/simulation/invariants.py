"""What must hold after every step of the simulation (issue 33 item 3), checked against the
Company's own ground truth (world.py: what it received, what it performed) and the agent's store.

Each check names the open finding (known_findings.py) a failure of that exact shape is, if any.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from poppy_tui.agent.agent import SETTLED, Agent
from poppy_tui.agent.lifecycle import Why
from poppy_tui.agent.store import OperationRecord, Status
from poppy_tui.agent.store.connection import parse_stamp
from poppy_tui.agent.store.owning_account import CONFIRMED, SIGN_IN_PREFIX
from poppy_tui.cli.output import where_it_stands
from poppy_tui.safety.account_owner import UNCONFIRMED_WAIT_PREFIX, compare_accounts
from poppy_tui.protocol.requests import ApiRequest, ConversationRequest, McpRequest

from .known_findings import Findings
from .world import Asked, World

# An approval whose outcome is not known: an equal request must wait for it (Ops 7).
IN_DOUBT_OR_ON_ITS_WAY = (Status.APPROVED, Status.SENDING, Status.OUTCOME_UNKNOWN)
# A kill leaves leases of the dead Agent that the clock must pass first (they are this long).
LEASE_SLACK_SECONDS = 1.0


@dataclass
class Model:
    """What the simulation did, as the person and the agents' callers."""

    asked: dict[int, Asked] = field(default_factory=dict)  # request row -> what it asked
    rows: set[int] = field(default_factory=set)  # every operation row the agent returned
    # operation row -> the person's decisions: (step, "approve" | "withdraw" | "decline" |
    # "resolve", the revision decided on)
    decisions: dict[int, list[tuple[int, str, str | None]]] = field(default_factory=dict)
    conversations: list[tuple[int, str]] = field(default_factory=list)  # (row, conversation_id)
    kills: list[datetime] = field(default_factory=list)
    # token -> its sign-in named the account
    named_tokens: dict[str, bool] = field(default_factory=dict)
    # operation row -> (step, token): the sign-ins the person said are its account (`u`)
    vouched: dict[int, list[tuple[int, str | None]]] = field(default_factory=dict)

    def decide(self, step: int, row: int, kind: str, revision: str | None) -> None:
        self.decisions.setdefault(row, []).append((step, kind, revision))

    def vouch(self, step: int, row: int, token: str | None) -> None:
        self.vouched.setdefault(row, []).append((step, token))

    def vouched_before(self, row: int, step: int) -> set[str | None]:
        return {token for at, token in self.vouched.get(row, []) if at < step}


def same_action(a: object, b: object) -> bool:
    """Whether two requests are for the same action, as the issue defines it: the same
    interface, and the same method, URL and body, or tool and arguments, or conversation."""
    if isinstance(a, ApiRequest) and isinstance(b, ApiRequest):
        return (a.method.upper(), a.url, _canonical(a.body)) == (
            b.method.upper(),
            b.url,
            _canonical(b.body),
        )
    if isinstance(a, McpRequest) and isinstance(b, McpRequest):
        return (a.server_url, a.tool, _canonical(a.arguments)) == (
            b.server_url,
            b.tool,
            _canonical(b.arguments),
        )
    if isinstance(a, ConversationRequest) and isinstance(b, ConversationRequest):
        return a.conversation_id is not None and a.conversation_id == b.conversation_id
    return False


def must_be_held(a: object, b: object) -> bool:
    """Requests so alike that an earlier one in doubt must hold the later (Ops 7): the same
    request, or the same words in the same conversation."""
    if isinstance(a, ConversationRequest) and isinstance(b, ConversationRequest):
        return (
            same_action(a, b)
            and " ".join(a.text.split()).casefold() == " ".join(b.text.split()).casefold()
        )
    return same_action(a, b)


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def requests_of(agent: Agent, row: int) -> list[object]:
    return [request for _, _, _, request in agent.store.revision_requests(row)]


# ---- the checks ---------------------------------------------------------------------------------


def check_company_side(world: World, agent: Agent, model: Model, findings: Findings) -> None:
    """Performed at most once; nothing sent after a withdrawal, a decline, a resolution or
    expires_at; an account's approval never with another account's token, nor spent on a
    Session that can't approve it."""
    if world.errors:
        findings.broken(None, f"the simulated Company itself failed: {world.errors}")
    counts: dict[str, int] = {}
    for performed in world.performs:
        counts[performed.operation_id] = counts.get(performed.operation_id, 0) + 1
        if counts[performed.operation_id] > 1:
            findings.broken(None, f"{performed.operation_id} was performed twice")
    for got in world.received:
        op = agent.store.find_operation(got.operation_id)
        if op is None:
            findings.broken(
                None, f"an approval of {got.operation_id}, unknown to the agent, was sent"
            )
            continue
        last = [d for d in model.decisions.get(op.id, []) if d[0] < got.step]
        if not last or last[-1][1] != "approve":
            said = last[-1][1] if last else "nothing"
            findings.broken(
                None,
                f"step {got.step}: an approval of {got.operation_id} {got.revision} was sent "
                f"after the person's last word on it was {said!r}",
            )
        elif last[-1][2] != got.revision:
            findings.broken(
                None,
                f"step {got.step}: an approval of {got.operation_id} {got.revision} was sent; "
                f"the person approved {last[-1][2]}",
            )
        if got.expires_at is not None and got.at >= got.expires_at:
            findings.broken(
                None,
                f"step {got.step}: an approval of {got.operation_id} {got.revision} was sent at "
                f"{got.at:%H:%M:%S}, after its expires_at {got.expires_at:%H:%M:%S}",
            )
        vouched = got.token in model.vouched_before(op.id, got.step)
        if got.check1 == "other_account" and not vouched:  # vouched: the person's own mistake
            # The agent took the operation for the token's account: returned again (the same
            # operation_id and revision, a Company bug Ops 3 forbids) to a sign-in as another.
            reassigned = op.account is not None and op.account == got.user
            findings.broken(
                "reassigned-account" if reassigned else _stamp_taken_for_the_word(agent, op.id),
                f"step {got.step}: the approval of {got.operation_id}, the account "
                f"{got.owner[1] if got.owner else '?'}'s, was carried by {got.user}'s token "
                f"(agent's record of its account: {op.account!r})",
            )
        if got.owner is not None and got.owner[0] == "account" and got.token is not None:
            # A sign-in that names no account is the operation's only as the one it came with,
            # or one the person vouched for (Ops 3): any other may be anyone's.
            came_with = got.token in world.returned_with.get(got.operation_id, set())
            if not (vouched or came_with or model.named_tokens.get(got.token, False)):
                findings.broken(
                    _stamp_taken_for_the_word(agent, op.id),
                    f"step {got.step}: the approval of {got.operation_id} went with the token of "
                    f"a sign-in ({got.user}'s) that names no account, didn't return it, and that "
                    f"the person never said is its account (vouched for: "
                    f"{sorted(map(str, model.vouched_before(op.id, got.step)))})",
                )
        if got.check1 == "other_session":
            findings.broken(
                None,
                f"step {got.step}: the approval of {got.operation_id} was spent on a Session "
                "that can't approve it",
            )


def check_outcomes(world: World, agent: Agent, model: Model, findings: Findings) -> None:
    """An outcome the agent states is the Company's: performed only if performed, not_performed
    only if not; each request's own outcome (the Company reusing an operation_id for another
    request doesn't make it performed for both)."""
    performed = {p.operation_id: p for p in world.performs}
    for row in sorted(model.rows):
        op = agent.store.get_operation(row)
        if op.status == Status.PERFORMED and op.operation_id not in performed:
            findings.broken(None, f"{op.operation_id} is 'performed' but the Company never did it")
        if op.status == Status.NOT_PERFORMED and op.operation_id in performed:
            findings.broken(
                None,
                f"{op.operation_id} is 'not_performed' but the Company performed it "
                f"(detail: {op.outcome_detail})",
            )
        if op.status not in SETTLED:
            continue
        for _, _, request_row, _ in agent.store.revision_requests(row):
            asked = model.asked.get(request_row)
            if asked is None:
                continue
            seen = agent.outcome_for_request(op, request_row)
            done = performed.get(op.operation_id)
            if seen.status == Status.PERFORMED and (done is None or done.asked != asked):
                findings.broken(
                    None,
                    f"request {request_row} ({asked}) is told 'performed', but the Company "
                    f"performed {done.asked if done else 'nothing'} under {op.operation_id}",
                )


# Why an approval may be neither sent nor on its way: each is told to the person (explain).
TOLD_WHY_NOT = frozenset({Why.SIGN_IN, Why.HELD_OTHER_ACCOUNT, Why.UNSIGNABLE, Why.EXPIRED})


def check_on_its_way(
    agent: Agent, model: Model, findings: Findings, now: datetime, lease_seconds: float
) -> None:
    """Every approval is on its way (a send time that comes) or the person is told why not, in
    the same words everywhere (Agent.explain, which `show` prints): after a pass at `now`, none
    sits approved, or waiting to be resent, past its time with no reason told."""
    # Right after a pass at `now`, whatever was due is handled, but what a dead Agent still
    # holds: its lease lapses `lease_seconds` after its last claim, at the latest.
    killed_lately = bool(model.kills) and now <= model.kills[-1] + timedelta(
        seconds=lease_seconds + LEASE_SLACK_SECONDS
    )
    slack = timedelta(seconds=LEASE_SLACK_SECONDS)
    for row in sorted(model.rows):
        op = agent.store.get_operation(row)
        if op.status not in (Status.APPROVED, Status.SENDING):
            continue
        said = agent.explain(row)
        shown = where_it_stands(agent.store, op)
        if (shown.why, shown.on_its_way, shown.sentence()) != (
            said.why,
            said.on_its_way,
            said.sentence(),
        ):
            findings.broken(
                None,
                f"{op.operation_id}: `show` says {shown.sentence()!r}, the agent {said.sentence()!r}",
            )
        if not said.on_its_way:
            if said.why not in TOLD_WHY_NOT:
                findings.broken(
                    None,
                    f"{op.operation_id} is {op.status.value}, not on its way, and the reason "
                    f"given is {said.why.value}: {said.sentence()!r}",
                )
            continue
        if killed_lately:
            continue  # a dead Agent's lease may still hold it; it lapses by then
        times = (
            [op.send_after, op.next_attempt_at]
            if op.status == Status.APPROVED
            else [op.next_attempt_at or op.updated_at]
        )
        due = max(parse_stamp(t) for t in times if t)
        if now - due <= slack and (said.at is None or now - said.at <= slack):
            continue
        attempts = agent.store.attempts(row)
        earlier = [a for a in attempts if a.revision_id != op.approved_revision_id]
        a52 = op.status == Status.APPROVED and bool(earlier)
        findings.broken(
            "A52" if a52 else None,
            f"{op.operation_id} sits {op.status.value} since {due:%H:%M:%S} (now {now:%H:%M:%S}): "
            f"its send time passed with nothing sent, and the person is told "
            f"{said.sentence()!r} (attempts: {[(a.revision_id, a.outcome) for a in attempts]})",
        )


def check_hold_names_the_same_action(
    agent: Agent, row: int, rows: set[int], findings: Findings, refused: bool
) -> None:
    """A hold for "the same action" names an operation for the same action; a different action
    is never held. And (Ops 7) the same request while an earlier one is in doubt is held."""
    mine = requests_of(agent, row)
    if refused:
        for other in agent.store.earlier_in_doubt(row):
            theirs = requests_of(agent, other.operation_row)
            if not any(same_action(a, b) for a in mine for b in theirs):
                conversations = all(isinstance(r, ConversationRequest) for r in mine + theirs)
                findings.broken(
                    "A51" if conversations else None,
                    f"operation row {row} is held as the same action as row "
                    f"{other.operation_row} ({other.operation_id}, {other.status.value}), "
                    f"a different action: {mine} / {theirs}",
                )
        return
    for other_row in sorted(rows - {row}):
        other = agent.store.get_operation(other_row)
        if other.status not in IN_DOUBT_OR_ON_ITS_WAY:
            continue
        theirs = requests_of(agent, other_row)
        if any(must_be_held(a, b) for a in mine for b in theirs):
            findings.broken(
                None,
                f"operation row {row} was approved while row {other_row} "
                f"({other.operation_id}), for the same request, is {other.status.value} (Ops 7)",
            )


def check_the_word_releases(agent: Agent, row: int, findings: Findings) -> None:
    """Right after the person said the sign-in now is the operation's account, its approval is
    no longer held for that word: nobody is told to press `u` again for the same sign-in."""
    said = agent.explain(row)
    if UNCONFIRMED_WAIT_PREFIX in said.line:
        findings.broken(
            None,
            f"operation row {row}: the person said the sign-in is its account, and is still "
            f"told {said.sentence()!r}",
        )


def check_the_word_no_longer_holds(
    agent: Agent, model: Model, findings: Findings, token: str
) -> None:
    """After a new sign-in, the person's word for an earlier one no longer holds (Ops 3): an
    approval released by it is held again, unless the new sign-in names its account."""
    for row, words in sorted(model.vouched.items()):
        if token in {t for _, t in words}:
            continue
        op = agent.store.get_operation(row)
        if op.status not in (Status.APPROVED, Status.SENDING):
            continue
        standing = agent.store.account_standing(op)
        if standing is None or standing.standing != "same":
            continue
        if (
            model.named_tokens.get(token, False)
            and compare_accounts(op.account, standing.current) == "same"
        ):
            continue  # shown by name
        findings.broken(
            "vouched-sign-in-stamp" if standing.sign_in in _vouched_stamps(agent, row) else None,
            f"operation row {row}: after a new sign-in (token {token}), the sign-in now is still "
            f"taken for its account (standing {standing}) on the person's word for an earlier one "
            f"({[t for _, t in words]})",
        )


def _stamp_taken_for_the_word(agent: Agent, row: int) -> str | None:
    """ "vouched-sign-in-stamp" when the sign-in now has the stamp of one the person vouched for:
    the open finding (the word is kept by that stamp), not another break."""
    standing = agent.store.account_standing(agent.store.get_operation(row))
    stamped = standing is not None and standing.sign_in in _vouched_stamps(agent, row)
    return "vouched-sign-in-stamp" if stamped else None


def _vouched_stamps(agent: Agent, row: int) -> set[str]:
    """The signed_in_at stamps the person's words name (the store's `account_confirmed` events)."""
    return {
        event.detail.removeprefix(SIGN_IN_PREFIX)
        for event in agent.store.events(row)
        if event.kind == CONFIRMED and event.detail
    }


def _approved_revision(agent: Agent, op: OperationRecord):
    if op.approved_revision_id is None:
        return None
    return agent.store.get_revision(op.approved_revision_id)
