"""Bugs this suite found in other modules, not yet fixed there.

The fuzzers below let an input through only if it fails in exactly one of these ways, so
every other crash still fails the run; test_known_bugs.py reproduces each one as a strict
xfail. When a bug is fixed its xfail starts to pass (XPASS fails the run): delete the entry
here and the xfail marker there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class KnownBug:
    key: str
    where: str
    what: str
    matches: Callable[[str, BaseException], bool]


def _is(exc: BaseException, kind: type[BaseException], *texts: str) -> bool:
    return type(exc) is kind and (not texts or any(t in str(exc) for t in texts))


KNOWN_BUGS: tuple[KnownBug, ...] = (
    KnownBug(
        "approval-header-non-latin1",
        "poppy_tui/protocol/approval.py parse_approval_header: value.encode('latin-1')",
        "a str header value with a character above U+00FF raises UnicodeEncodeError, not InvalidApproval",
        lambda parser, exc: parser == "parse_approval_header" and _is(exc, UnicodeEncodeError),
    ),
    KnownBug(
        "extensions-header-non-latin1",
        "poppy_tui/protocol/extensions.py parse_extensions_header: value.encode('latin-1')",
        "a str header value with a character above U+00FF raises UnicodeEncodeError, not InvalidExtensions"
        " (declares_operations, which catches only InvalidExtensions, raises it too)",
        lambda parser, exc: parser in ("parse_extensions_header", "declares_operations")
        and _is(exc, UnicodeEncodeError),
    ),
    KnownBug(
        "retry-after-digits",
        "poppy_tui/protocol/retry.py parse_retry_after: `if text.isdigit(): return float(int(text))`",
        "str.isdigit() is true for '\\xb2' (superscript two, a latin-1 header byte) and int() refuses it "
        "(ValueError); 4301+ digits raise ValueError (int max str digits); 309+ digits raise OverflowError "
        "in float(). The docstring promises None for unreadable values.",
        lambda parser, exc: parser == "parse_retry_after"
        and (_is(exc, ValueError, "invalid literal for int()", "Exceeds the limit") or _is(exc, OverflowError)),
    ),
    KnownBug(
        "rfc3339-leap-second-overflow",
        "poppy_tui/protocol/timestamps.py parse_rfc3339: `value += timedelta(seconds=1)` for second 60",
        "'9999-12-31T23:59:60Z' raises OverflowError, which parse_operation (and the API/MCP/message "
        "carriers) let through instead of InvalidOperation",
        lambda parser, exc: parser
        in ("parse_rfc3339", "parse_operation", "operation_from_api_body", "operation_from_mcp_result",
            "operation_from_message", "classify_http")
        and _is(exc, OverflowError, "date value out of range"),
    ),
    KnownBug(
        "discovery-url-valueerror",
        "poppy_tui/protocol/discovery.py check_url: `urlsplit(url)` / `parts.hostname`",
        "a URL such as 'http://[' or 'http://[zz]/' (apis[].url, auth.issuer, agent endpoint) raises urllib's "
        "plain ValueError ('Invalid IPv6 URL', \"does not appear to be an IPv4 or IPv6 address\"), not "
        "InvalidDiscovery; a caller catching ProtocolError/InvalidDiscovery misses it",
        lambda parser, exc: parser == "parse_poppy_json"
        and _is(exc, ValueError, "Invalid IPv6 URL", "does not appear to be an IPv4 or IPv6 address"),
    ),
    KnownBug(
        "session-jwt-jwk-errors",
        "poppy_tui/protocol/session_jwt.py verify_session_jwt: the try around from_jwk/jwt.decode catches only "
        "jwt.PyJWTError",
        "a header jwk whose x or y is not a string raises TypeError, whose point is not on P-256 raises "
        "ValueError, whose base64 is badly padded raises binascii.Error; all escape instead of InvalidSession",
        lambda parser, exc: parser == "verify_session_jwt"
        and (
            _is(exc, TypeError, "Expected a string or bytes value")
            or _is(exc, ValueError, "Point is not on the curve")
            or (type(exc).__name__ == "Error" and type(exc).__module__ == "binascii")
        ),
    ),
    KnownBug(
        "session-jwt-iat-type",
        "poppy_tui/protocol/session_jwt.py verify_session_jwt: `claims['iat'] > now + ...` with verify_iat off",
        "a validly signed token whose iat is a string (or other non-number) raises TypeError, not InvalidSession",
        lambda parser, exc: parser == "verify_session_jwt" and _is(exc, TypeError, "not supported between"),
    ),
    KnownBug(
        "store-expires-at-overflow",
        "poppy_tui/agent/store/store.py stamp(): `value.astimezone(timezone.utc)`, called by record_operation",
        "parse_operation accepts expires_at '9999-12-31T23:59:59-23:59' or '0001-01-01T00:00:00+23:59' (valid "
        "RFC 3339), but their UTC form is outside datetime's range, so Store.record_operation raises "
        "OverflowError (not StoreError) and the Company's answer can't be kept",
        lambda parser, exc: parser == "Store.record_operation" and _is(exc, OverflowError, "date value out of range"),
    ),
    KnownBug(
        "store-stamp-year-below-1000",
        "poppy_tui/agent/store/store.py stamp()/parse_stamp(): strftime('%Y') does not zero-pad years < 1000",
        "an operation whose expires_at is before year 1000 (e.g. '0999-01-01T00:00:00Z', valid RFC 3339) is "
        "stored as '999-01-01T...'; from then on list_operations()/get_operation() raise ValueError (the inbox "
        "and history can't open), and expire_due() never expires it (text comparison '999-' > '2026-')",
        lambda parser, exc: parser == "Store.read" and _is(exc, ValueError, "does not match format"),
    ),
)


def known_bug(parser: str, exc: BaseException) -> KnownBug | None:
    for bug in KNOWN_BUGS:
        if bug.matches(parser, exc):
            return bug
    return None
