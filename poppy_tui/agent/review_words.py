"""What a review says about an operation, in words every face of poppy-tui shares: why it can't be
approved now (or never), the banner that says where it stands, the findings in the order they are
read, and the title over them. The TUI's review screen and `poppy-tui web`'s review page both show
these, so a hold, a block or a "not yet" reads the same wherever the person decides.

No Textual here. Keys are the TUI's: the banner's parts that name a key are marked, so a face
whose controls are buttons leaves them out and puts the button beside the words instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from collections.abc import Callable, Iterable, Sequence

from poppy_tui.agent.status_words import (
    WAITING_SIGN_IN_MEANING,
    checks_summary,
    countdown,
    parse_stamp,
    record_status_label,
    status_meaning,
)
from poppy_tui.agent.store.status import Status

KeyFor = Callable[[str, str], str]

SEVERITY_LABEL = {"danger": "DANGER:", "warning": "WARNING:", "info": "NOTE:"}
_RANK = {"danger": 0, "warning": 1, "info": 2}


def default_key(binding_id: str, default: str) -> str:
    return default


# ---- why approving is not possible now ---------------------------------------------------------


def approve_blocked(
    record: Any,
    *,
    loaded: bool,
    readable: bool,
    shown_revision_id: int | None,
    now: datetime,
    held: Sequence[Any] = (),
    other_account: str | None = None,
    arming_left: float = 0.0,
) -> tuple[str, bool] | None:
    """(why, for good) when approving does nothing now; None when it may ask to confirm. For good
    when waiting won't help (unreadable, settled, expired). `held`: earlier operations for the
    same action whose outcome is unknown (Ops 7); `other_account`: the account signed in now when
    it is another than the operation's own (Ops 3); `arming_left`: seconds of the arming delay."""
    if record is None or not loaded:
        return "the operation is still loading", False
    if not readable:
        return "poppy could not read this operation, so there is nothing exact to approve", True
    if record.current.id != shown_revision_id:
        return "new terms arrived; read them first", False
    if not record.status.is_open:
        return f"it is not waiting for a decision (it is {record_status_label(record)})", True
    if record.current.expires_at <= now:
        return "this revision has expired", True
    if held:
        from poppy_tui.safety.request_reuse import in_doubt_reason

        return in_doubt_reason(list(held)), False
    if other_account is not None and record.account is not None:
        from poppy_tui.safety.account_owner import other_account_reason

        return other_account_reason(record.company.name, record.account, other_account), False
    if arming_left > 0:
        return (
            f"approve is available in {arming_left:.1f} s, so that you read the operation first",
            False,
        )
    return None


def not_approved_message(blocked: tuple[str, bool]) -> str:
    """What a refused approve says: "Not yet" only where waiting helps (an operation already
    performed, declined or expired will never be approvable)."""
    why, for_good = blocked
    lead = "Can't approve" if for_good else "Not yet"
    return f"{lead}: {why}. Nothing was approved."


# ---- the findings, in the order they are read ---------------------------------------------------


def review_findings(
    record: Any,
    *,
    held: Sequence[Any] = (),
    done_before: Sequence[Any] = (),
    other_account: str | None = None,
    checked: Iterable[Any] = (),
    resource: Iterable[Any] = (),
    account: Iterable[Any] | None = None,
) -> tuple[Any, ...]:
    """Everything a review lists, danger first: what holds the approval back (first among the
    dangers), the revision's checks and those of its resource as read now. `account`: the
    findings about the sign-in's account where the caller knows its standing (another account,
    or one not shown to be the operation's: safety/account_owner.account_findings); else they
    are made from `other_account` alone."""
    from poppy_tui.safety.account_owner import other_account_findings
    from poppy_tui.safety.request_reuse import in_doubt_findings, performed_findings

    base = (
        *(
            other_account_findings(
                record.company.name if record else "",
                record.account if record else None,
                other_account,
            )
            if account is None
            else account
        ),
        *in_doubt_findings(list(held)),
        *performed_findings(list(done_before)),
        *checked,
    )
    extra = tuple(resource)
    if not extra:
        return tuple(base)
    return tuple(sorted((*base, *extra), key=lambda f: _RANK.get(f.severity, 3)))


def badge_counts(findings: Iterable[Any]) -> tuple[int, int]:
    """(dangers, warnings): what the inbox badge counts."""
    dangers = warnings = 0
    for finding in findings:
        if finding.severity == "danger":
            dangers += 1
        elif finding.severity == "warning":
            warnings += 1
    return dangers, warnings


def checks_title(findings: Sequence[Any]) -> str:
    """The line above the findings."""
    dangers, warnings = badge_counts(findings)
    if dangers or warnings:
        return f"Checks: {checks_summary(dangers, warnings)} — read these before the summary"
    if findings:
        return "Checks: nothing wrong found, notes below"
    return "Checks: the summary, the terms and your request agree"


def severity_label(severity: str) -> str:
    return SEVERITY_LABEL.get(severity, severity.upper() + ":")


# ---- where it stands: the banner -----------------------------------------------------------------


@dataclass(frozen=True)
class Banner:
    """The banner's first line as parts, (text, names a key), and the explanation under it (None
    where the first line says it all). `head()` is the TUI's line; `head(keys=False)` leaves out
    the parts that name keys, for a face whose controls are buttons beside the banner."""

    parts: tuple[tuple[str, bool], ...]
    meaning: str | None = None

    def head(self, keys: bool = True) -> str:
        return "".join(text for text, names_key in self.parts if keys or not names_key)


# The banner's first line says the outcome; the explanation under it only where it adds
# something (what to do, what happens next), so the review says each outcome once.
EXPLAINED = (Status.PENDING, Status.SENDING, Status.OUTCOME_UNKNOWN)


def banner(
    record: Any,
    now: datetime,
    *,
    key_for: KeyFor = default_key,
    arming_left: float = 0.0,
    unsignable: str | None = None,
    company_stopped: str | None = None,
    declined_before: str | None = None,
    where_it_stands: Any = None,
    account_hold: tuple[str, str] | None = None,
) -> Banner:
    """Where `record` stands, as the review's banner says it. `company_stopped`: the line to say
    when its Company ran in a demo that has ended (agent/demo_marker.py); `declined_before`: when
    the person declined an earlier revision (agent/earlier_decline.py); `where_it_stands`: an
    approval's lifecycle Explanation (Agent.explain), the words `poppy-tui show` prints;
    `account_hold`: why a kept approval waits now because of the sign-in at its Company (Ops 3,
    safety/account_owner): ("other", the line naming both accounts) or ("unconfirmed", the held
    line), said instead of the line the wait began with, which the sign-in since may have made
    untrue ("Sign in to … to continue")."""
    from poppy_tui.safety.error_line import error_line
    from poppy_tui.safety.sanitize import sanitize_line

    status = record.status
    key = key_for
    approve = (
        f"{key('approve', 'a')}: approve… (available in {arming_left:.1f} s)"
        if arming_left > 0
        else f"{key('approve', 'a')}: approve…"
    )
    decline = f"{key('decline', 'd')}: decline…"
    if unsignable and status in (Status.PENDING, Status.WITHDRAWN):
        # Said where the person looks, rather than in a toast that covers the review.
        return Banner(
            (
                ("WAITING FOR YOUR DECISION — approving is unavailable on this machine", False),
                (f"   {decline}", True),
            ),
            f"Approvals can't be signed here: {error_line(unsignable, 600)}",
        )
    if company_stopped and status in (Status.APPROVED, Status.SENDING):
        # Not "SENDING — attempt 6": nothing can reach a demo Company that has stopped.
        return Banner(
            (
                (
                    "NOT SENT — the demo Company has stopped, so this approval will not be sent",
                    False,
                ),
            ),
            company_stopped,
        )
    parts: tuple[tuple[str, bool], ...]
    if status == Status.PENDING:
        parts = (("WAITING FOR YOUR DECISION", False), (f" — {approve}   {decline}", True))
        if declined_before:
            # Not a plain "waiting": the person said no to this action once already.
            return Banner(parts, declined_before_line(declined_before))
    elif status == Status.WITHDRAWN:
        again = approve.replace("approve…", "approve again…")
        parts = (("WITHDRAWN — nothing was sent.", False), (f" {again}   {decline}", True))
        if declined_before:
            return Banner(parts, declined_before_line(declined_before))
    elif status == Status.APPROVED:
        send_after = parse_stamp(record.send_after)
        left = None if send_after is None else (send_after - now).total_seconds()
        if left is not None and left > 0:
            parts = (
                (f"APPROVED — sending in {countdown(left)}", False),
                (f". Press {key('withdraw', 'w')} to withdraw", True),
                ("; nothing has been sent yet", False),
            )
        else:
            if where_it_stands is not None and not where_it_stands.on_its_way:
                # Held (another account, unsignable here, expired): said, not "sending now".
                return Banner((("APPROVED — not sent", False),), where_line(where_it_stands))
            parts = (("APPROVED — the grace period is over; sending now", False),)
    elif (
        status == Status.SENDING
        and record.waiting_sign_in
        and account_hold is not None
        and (account_hold[0] == "unconfirmed")
    ):
        # Held until the person says whether this sign-in is the operation's account (Ops 3).
        return Banner(
            (
                ("HELD — is this sign-in the account it belongs to?", False),
                (
                    f" {key('confirm_account', 'u')}: it is, send it   "
                    f"{key('sign_in_to_send', 's')}: sign in as it",
                    True,
                ),
            ),
            sanitize_line(account_hold[1], 600).text,
        )
    elif status == Status.SENDING and record.waiting_sign_in:
        # The approval is kept; the Company wants the person signed in first (Ops 3). "waiting for
        # sign-in: why" or, held for its account, "waiting for sign-in as "A": why" (the sign-in
        # now, where it is another account's: both named): the head says the first words once.
        waiting = (
            account_hold[1]
            if account_hold is not None and account_hold[0] == "other"
            else record.waiting_sign_in
        )
        why = waiting.removeprefix("waiting for sign-in").removeprefix(":").strip()
        if not why.startswith("as "):
            # The Company's ask once, under a short head (at 80x24 the head had said it, then the
            # meaning, the attempt and the detail: six lines).
            return Banner(
                (
                    ("WAITING FOR SIGN-IN — ", False),
                    (f"{key('sign_in_to_send', 's')}: sign in, and ", True),
                    ("your approval is sent", False),
                ),
                f"You approved; the Company asked: {sanitize_line(why, 300).text}. Nothing is "
                "sent until then; your approval is kept until the terms expire.",
            )
        why = sanitize_line(why, 300).text
        parts = (
            (f"WAITING FOR SIGN-IN {why}.", False),
            (f" Press {key('sign_in_to_send', 's')} to sign in;", True),
            (" your approval is then sent again (before it expires)", False),
        )
        # Not "being sent": nothing goes out until the person signs in.
        return Banner(parts, WAITING_SIGN_IN_MEANING)
    elif status == Status.SENDING:
        head = f"SENDING — attempt {record.attempt_count}"
        if record.next_attempt_at:
            retry_at = parse_stamp(record.next_attempt_at)
            if retry_at is not None:
                wait = (retry_at - now).total_seconds()
                head += f"; next retry in {countdown(wait)}" if wait > 0 else "; retrying now"
        parts = ((head, False),)
    elif status == Status.PERFORMED:
        parts = (("PERFORMED — the Company confirmed it did this", False),)
    elif status == Status.NOT_PERFORMED:
        parts = (("NOT PERFORMED — the Company did not do this", False),)
    elif status == Status.OUTCOME_UNKNOWN:
        parts = (
            ("OUTCOME UNKNOWN", False),
            (f" — press {key('resolve', 'r')} once you have checked with the Company", True),
        )
    elif status == Status.DECLINED:
        parts = (("DECLINED — you declined; the action was not performed", False),)
    else:
        parts = (("EXPIRED — this can no longer be approved; the action was not performed", False),)
    if status == Status.SENDING and where_it_stands is not None:
        # Where it stands as the lifecycle explains it (as `show` says it), then the promise.
        return Banner(
            parts,
            f"{where_line(where_it_stands)}. Retries reuse the same approval, so it is done at "
            "most once.",
        )
    return Banner(parts, status_meaning(status) if status in EXPLAINED else None)


def where_line(where: Any) -> str:
    """An Explanation's sentence (Company-written detail in it made one safe line), with its
    time as every screen writes one."""
    from poppy_tui.agent.status_words import local_time
    from poppy_tui.safety.sanitize import sanitize_line

    said = sanitize_line(where.sentence(local_time), 400).text
    return said[:1].upper() + said[1:]


def declined_before_line(stamp: str) -> str:
    from poppy_tui.agent.status_words import local_time

    return (
        f"You declined an earlier revision on {local_time(stamp)}; the Company sent this new one "
        "(to a later request). Nothing has been done."
    )


# ---- the sign-in's account (Ops 3, "while signed in to the same account") -----------------------


def account_standing_of(store: Any, record: Any) -> tuple[Any, str | None]:
    """(the sign-in's standing to this operation, agent/store/owning_account.py: None for a
    Session's operation or a settled one; the other account signed in, while it waits for a
    decision). What the TUI's review and the web page both read."""
    standing = (
        store.account_standing(record)
        if record.account_owned and not record.status.is_final
        else None
    )
    other = (
        standing.current
        if standing is not None and standing.standing == "other" and record.status.is_open
        else None
    )
    return standing, other


def account_findings_of(record: Any, standing: Any, other_account: str | None) -> list[Any]:
    """Another account: a DANGER while it waits for a decision; a sign-in not shown to be its
    account: a WARNING (its approval is held) until settled."""
    from poppy_tui.safety.account_owner import account_findings

    if record is None or standing is None:
        return []
    if standing.standing != "unconfirmed" and other_account is None:
        return []
    return account_findings(record.company.name, record.account, standing)


def account_hold_of(record: Any, standing: Any) -> tuple[str, str] | None:
    """What the banner says of the sign-in now, for a kept approval (banner's `account_hold`)."""
    from poppy_tui.safety.account_owner import other_account_wait, unconfirmed_account_hold

    if standing is None:
        return None
    if standing.standing == "other" and record.account and standing.current:
        return "other", other_account_wait(record.company.name, record.account, standing.current)
    if standing.standing == "unconfirmed":
        hold = unconfirmed_account_hold(record.company.name, record.account, standing.current)
        return "unconfirmed", hold[0].upper() + hold[1:]
    return None
