"""The words for an account-owned operation and the account the agent is signed in as (Ops 3,
"Who can approve it": an operation returned signed in belongs to the account, and may be approved
while signed in to the same account).

Account names come from the Company (what the person typed at a mediated sign-in, or what the
Company said of the sign-in: an ID token, userinfo, a JWT access token's `sub`): hostile, compared
exactly as written (same_account), and shown only through sanitize_line here, as is the
Company's name. Pure: no I/O, no Textual.
"""

from __future__ import annotations

from typing import Literal

from poppy_tui.safety.findings import Finding
from poppy_tui.safety.sanitize import sanitize_line

OTHER_ACCOUNT_CODE = "other_account"
# How other_account_wait's line begins: how screens tell it from a Company's sign-in challenge.
OTHER_ACCOUNT_WAIT_PREFIX = "waiting for sign-in as "
ACCOUNT_CHARS = 80
COMPANY_CHARS = 60


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _email_parts(name: str) -> tuple[str, str] | None:
    """(local part, domain) when the name is shaped as an email address: something, `@`, a
    domain with no `@` or blank in it."""
    local, at, domain = name.rpartition("@")
    if not at or not local or not domain or any(c.isspace() for c in domain):
        return None
    return local, domain


def same_account(one: str, other: str) -> bool:
    """Whether two account names the Company gave name the same account: compared as written,
    character for character, except an email address's domain, whose ASCII letters are compared
    without case (DNS names are, RFC 4343). Nothing else is folded or normalised: the local part
    is the mailbox's own (RFC 5321 2.4), and Unicode case folding or NFKC would make two
    different names one (`straße@…` and `STRASSE@…`, a KELVIN SIGN and `k`), so that one
    account's approval would go out with the other's token."""
    if one == other:
        return True
    a, b = _email_parts(one), _email_parts(other)
    return (
        a is not None
        and b is not None
        and a[0] == b[0]
        and a[1].translate(_ASCII_LOWER) == b[1].translate(_ASCII_LOWER)
    )


def compare_accounts(owner: str | None, current: str | None) -> Literal["same", "other", "unknown"]:
    """The operation's account against the sign-in's, by name: "unknown" when either is not
    named, or when one is an email address and the other isn't (an ID token's `sub` beside a
    typed email: two ways of naming, which a difference proves nothing about)."""
    if not owner or not current:
        return "unknown"
    if same_account(owner, current):
        return "same"
    if (_email_parts(owner) is None) != (_email_parts(current) is None):
        return "unknown"
    return "other"


def account_text(account: str) -> str:
    """One account name, sanitised and quoted, so it reads as the Company's words, not ours."""
    return f"“{sanitize_line(account, ACCOUNT_CHARS).text}”"


def _company(name: str) -> str:
    return sanitize_line(name, COMPANY_CHARS).text


def other_account_reason(company_name: str, owner: str, current: str) -> str:
    """Why `a` is refused: one line naming both accounts and what to do."""
    return (
        f"this operation belongs to your account {account_text(owner)} at {_company(company_name)}, but poppy-tui "
        f"is signed in there as {account_text(current)}; sign in to {_company(company_name)} as "
        f"{account_text(owner)} to approve it"
    )


def other_account_wait(company_name: str, owner: str, current: str) -> str:
    """An approval held back (kept, not sent) while signed in as another account: the one line shown."""
    return (
        f"{OTHER_ACCOUNT_WAIT_PREFIX}{account_text(owner)}: poppy-tui is signed in to {_company(company_name)} as "
        f"{account_text(current)}, and this operation belongs to {account_text(owner)}; it is sent once you sign "
        f"in as {account_text(owner)} (until its terms expire)"
    )


def owner_line(owner: str | None) -> str:
    """Who may approve an account-owned operation, for `show` and the review: one line, and for an
    account the sign-in didn't name (Device Sign-In, say), what the person does about it."""
    if owner is None:
        return "your account (name unknown: approve only while signed in as it)"
    return f"your account {account_text(owner)} (returned signed in as it; only a sign-in as it may approve it)"


UNCONFIRMED_CODE = "account_unconfirmed"
# How account_wait's line begins for a sign-in not shown to be the operation's account.
UNCONFIRMED_WAIT_PREFIX = "waiting for you to say whose sign-in this is"
# The review's key for "this sign-in is the operation's account: send it" (the TUI's keymap may
# rename it; `show` and the MCP gate name this default).
CONFIRM_ACCOUNT_KEY = "u"


def unconfirmed_account_reason(company_name: str, owner: str | None, current: str | None) -> str:
    """Why a sign-in can't be shown to be the operation's account: whose it is, who is signed in
    (both named, where known), and that poppy-tui can't tell."""
    company = _company(company_name)
    if owner:
        whose = f"this operation belongs to your account {account_text(owner)} at {company}"
    else:
        whose = (
            f"this operation belongs to the account signed in at {company} when it came, "
            "which that sign-in didn't name"
        )
    if owner and current:
        now = f"poppy-tui is signed in there as {account_text(current)}, a name of another kind"
    elif current:
        now = f"poppy-tui has signed in there again since, as {account_text(current)}"
    elif owner:
        now = "the sign-in there now doesn't name its account"
    else:
        now = "poppy-tui has signed in there again since, with a sign-in that names none either"
    return f"{whose}, and {now}, so poppy-tui can't tell whether it is the same account"


def unconfirmed_account_todo(key: str = CONFIRM_ACCOUNT_KEY) -> str:
    """What the person does: say it is (the review's key), or sign in as the account."""
    return (
        f"if this sign-in is that account, press {key} in its review and the approval goes with it; "
        "if not, sign in as that account"
    )


def account_wait(company_name: str, owner: str | None, standing: object) -> str:
    """An approval held back (kept, not sent) because the sign-in now is not shown to be the
    operation's account (agent/store/owning_account.AccountStanding): the one line shown for
    it in the review's banner, `show`, the MCP gate and the attempt."""
    current = getattr(standing, "current", None)
    if getattr(standing, "standing", None) == "other" and owner and current:
        return other_account_wait(company_name, owner, current)
    return (
        f"{UNCONFIRMED_WAIT_PREFIX}: {unconfirmed_account_reason(company_name, owner, current)}; "
        f"{unconfirmed_account_todo()}"
    )


def unconfirmed_account_hold(company_name: str, owner: str | None, current: str | None) -> str:
    """The one sentence every reader shows for a sign-in not shown to be the operation's account:
    the review's finding and banner, `show` and the MCP gate, after their "Held: "."""
    return (
        "nothing is sent until you say whose sign-in this is: "
        f"{unconfirmed_account_reason(company_name, owner, current)}; {unconfirmed_account_todo()}"
    )


def account_findings(company_name: str, owner: str | None, standing: object) -> list[Finding]:
    """The finding the review shows for the sign-in now: a DANGER for another account (approving
    is refused), a WARNING for one not shown to be its account (nothing is sent until the person
    says); none otherwise."""
    kind = getattr(standing, "standing", None)
    current = getattr(standing, "current", None)
    if kind == "other":
        return other_account_findings(company_name, owner, current)
    if kind != "unconfirmed":
        return []
    hold = unconfirmed_account_hold(company_name, owner, current)
    return [Finding("warning", UNCONFIRMED_CODE, f"Held: {hold}.", None)]


def other_account_findings(
    company_name: str, owner: str | None, current: str | None
) -> list[Finding]:
    """The DANGER finding the review shows while signed in as another account; none otherwise."""
    if owner is None or current is None:
        return []
    reason = other_account_reason(company_name, owner, current)
    return [Finding("danger", OTHER_ACCOUNT_CODE, f"Can't be approved now: {reason}.", None)]
