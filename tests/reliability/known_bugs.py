"""Bugs this suite found in other modules that are still open.

The fuzzers let an input through only if it fails in exactly one of these ways, so every
other crash still fails the run; test_regressions.py reproduces each open one as a strict
xfail (`@known(key)`). When a bug is fixed its xfail starts to pass (XPASS fails the run):
delete the entry here and the marker there, and the test stays as a regression test.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable


@dataclass(frozen=True)
class KnownBug:
    key: str
    where: str
    what: str
    matches: Callable[[str, BaseException], bool]


def _is(exc: BaseException, kind: type[BaseException], *texts: str) -> bool:
    return type(exc) is kind and (not texts or any(t in str(exc) for t in texts))


KNOWN_BUGS: tuple[KnownBug, ...] = (
    # Open bugs go here, e.g.:
    # KnownBug("retry-after-digits", "poppy_tui/protocol/retry.py parse_retry_after", "what goes wrong",
    #          lambda parser, exc: parser == "parse_retry_after" and _is(exc, ValueError, "invalid literal")),
    # Fixed so far (regression tests in test_regressions.py): approval/extensions headers with
    # non-latin-1 text, Retry-After digits, RFC 3339 overflow and years the store can't sort,
    # bracketed hosts in poppy.json, malformed jwk / non-numeric iat, quick_check ignored.
)


def known_bug(parser: str, exc: BaseException) -> KnownBug | None:
    for bug in KNOWN_BUGS:
        if bug.matches(parser, exc):
            return bug
    return None
