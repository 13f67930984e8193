"""The words for an account-owned operation and the account the agent is signed in as (Ops 3,
"Who can approve it": an operation returned signed in belongs to the account, and may be approved
while signed in to the same account).

Account names come from the Company (what the person typed at a mediated sign-in, or what the
Company said of the sign-in): hostile, so every one goes through sanitize_line here, as does the
Company's name. Pure: no I/O, no Textual.
"""

from __future__ import annotations

from poppy_tui.safety.findings import Finding
from poppy_tui.safety.sanitize import sanitize_line

OTHER_ACCOUNT_CODE = "other_account"
# How other_account_wait's line begins: how screens tell it from a Company's sign-in challenge.
OTHER_ACCOUNT_WAIT_PREFIX = "waiting for sign-in as "
ACCOUNT_CHARS = 80
COMPANY_CHARS = 60


def same_account(one: str, other: str) -> bool:
    """Whether two account names the Company gave name the same account. Compared without case
    and surrounding blanks: the name kept is what the person typed at sign-in ("Ada@Juniper.test"
    and "ada@juniper.test" are the same person), and a wrong "different" would hold an approval
    the Company would take."""
    return one.strip().casefold() == other.strip().casefold()


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
    """Who may approve an account-owned operation, for `show` and the review."""
    if owner is None:
        return "your account (returned signed in; which account is not known, so any sign-in there may approve it)"
    return f"your account {account_text(owner)} (returned signed in as it; only a sign-in as it may approve it)"


def other_account_findings(
    company_name: str, owner: str | None, current: str | None
) -> list[Finding]:
    """The DANGER finding the review shows while signed in as another account; none otherwise."""
    if owner is None or current is None:
        return []
    reason = other_account_reason(company_name, owner, current)
    return [Finding("danger", OTHER_ACCOUNT_CODE, f"Can't be approved now: {reason}.", None)]
