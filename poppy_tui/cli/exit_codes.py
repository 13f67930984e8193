"""Exit codes: documented in docs/cli.md and in `poppy-tui --help`. Scripts depend on them."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0  # done; a request was performed
    ERROR = (
        1  # couldn't do it: Company unreachable or misbehaving, unknown company/operation, database
    )
    USAGE = 2  # bad command line, bad argument value (JSON, URL, faults), bad config file
    PENDING = (
        3  # an operation waits in the queue: for a person's decision, or approved and being sent
    )
    DECLINED = 4  # the person declined; nothing was sent
    NOT_PERFORMED = 5  # the Company answered and did not perform it
    UNKNOWN = 6  # sent, but whether it took effect is unknown
    EXPIRED = 7  # the operation expired before it was approved and sent
    SIGN_IN_REQUIRED = (
        8  # the Company wants you signed in (or with more scopes): poppy-tui signin COMPANY
    )
    TIMED_OUT = 9  # --wait --timeout ran out; the operation stays queued
    INTERRUPTED = 130  # Ctrl-C; anything queued stays queued


# By status name, so that importing this module stays free of the store.
STATUS_EXIT = {
    "pending": Exit.PENDING,
    "withdrawn": Exit.PENDING,
    "approved": Exit.PENDING,
    "sending": Exit.PENDING,
    "performed": Exit.OK,
    "declined": Exit.DECLINED,
    "not_performed": Exit.NOT_PERFORMED,
    "outcome_unknown": Exit.UNKNOWN,
    "expired": Exit.EXPIRED,
}

REQUEST_EXIT = {
    "performed": Exit.OK,
    "operation": Exit.PENDING,
    "not_performed": Exit.NOT_PERFORMED,
    "unknown": Exit.UNKNOWN,
}


def first_failure(codes: list[int]) -> int:
    """Several operations from one request: the first code that isn't success speaks for all."""
    return next((code for code in codes if code != Exit.OK), Exit.OK)


# Every line under 80 columns: `--help` prints this as written (it is not re-wrapped), and a
# terminal of 80 would break the longer lines mid-word.
EPILOG = """\
exit codes:
  0  done (the request was performed)
  1  error: Company unreachable or misbehaving, unknown company or operation,
     database problem
  2  usage: bad command line, bad argument (JSON, URL, fault spec), bad config
  3  an operation waits in the queue (its number is printed): open poppy-tui
     to review it
  4  declined in poppy-tui; nothing was sent
  5  not performed: the Company answered and did not do it
  6  outcome unknown: sent, but whether it took effect is not known
  7  expired before it was approved
  8  sign-in required: the Company asks you to sign in (or for more scopes);
     run poppy-tui signin COMPANY
  9  --wait --timeout ran out before the operation settled; it stays queued
  130  interrupted (Ctrl-C); queued operations stay queued

Only a person at the TUI approves or declines.
There is no approve command and no --yes.
See docs/cli.md for JSON shapes and examples."""
