"""Fuzzing every parser that reads what a Company (or, on the demo side, an agent) sends.

Property: for any input, a parser returns a valid value or raises its documented error
type, naming the field. Never another exception, never a hang. Inputs are both random
JSON/text and near-valid objects with one or more fields mutated, so the fuzzer gets past
the first checks. Bugs already reported are listed in known_bugs.py and reproduced as strict
xfails in test_known_bugs.py; everything else fails here.
"""

from __future__ import annotations

import base64
import json
import math
from datetime import datetime, timedelta, timezone, UTC
from email.utils import format_datetime

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poppy_tui.protocol.approval import (
    Approval,
    approval_from_mcp_meta,
    approval_from_message,
    parse_approval_header,
)
from poppy_tui.protocol.conventions import SESSION_JWT_TYP
from poppy_tui.protocol.discovery import CompanyDocument, parse_poppy_json
from poppy_tui.protocol.errors import (
    InvalidApproval,
    InvalidDiscovery,
    InvalidExtensions,
    InvalidMessage,
    InvalidOperation,
)
from poppy_tui.protocol.extensions import (
    declares_operations,
    document_supports_operations,
    parse_extensions_header,
)
from poppy_tui.protocol.ids import is_valid_id
from poppy_tui.protocol.jsonlimits import loads_bounded
from poppy_tui.protocol.operation import (
    Operation,
    operation_from_api_body,
    operation_from_mcp_result,
    operation_from_message,
    parse_operation,
)
from poppy_tui.protocol.outcomes import (
    ApprovalRequired,
    BadResponse,
    NotPerformed,
    NotSent,
    Performed,
    RetryLater,
    Unknown,
    classify_http,
)
from poppy_tui.protocol.requests import ApiRequest
from poppy_tui.protocol.retry import parse_retry_after
from poppy_tui.protocol.session_jwt import InvalidSession, VerifiedSession, verify_session_jwt
from poppy_tui.protocol.timestamps import parse_rfc3339
from tests.reliability.known_bugs import known_bug

# ~60 s of CI for the whole module; the numbers are per test.
FUZZ = settings(
    max_examples=700,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)
FUZZ_SLOW = settings(FUZZ, max_examples=300)


def guarded(parser: str, allowed: tuple[type[BaseException], ...], fn, *args, **kwargs):
    """Call a parser; its documented errors and already-reported bugs count as 'no crash'."""
    try:
        return fn(*args, **kwargs), None
    except allowed as exc:
        return None, exc
    except Exception as exc:  # the point of the test
        if known_bug(parser, exc) is not None:
            return None, exc
        raise AssertionError(
            f"{parser} raised {type(exc).__name__}: {exc!r} for input {args!r:.500}"
        ) from exc


# ---- strategies ----------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)  # json.loads accepts NaN/Infinity
    | st.text(max_size=40)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=16,
)

good_ids = st.from_regex(r"[A-Za-z0-9_-]{1,40}", fullmatch=True)
ids = st.one_of(
    good_ids,
    good_ids,
    st.from_regex(r"[A-Za-z0-9_-]{250,260}", fullmatch=True),
    st.text(max_size=30),
    json_values,
)

offsets = st.integers(-1439, 1439).map(lambda m: timezone(timedelta(minutes=m)))
formatted_times = st.builds(lambda d, tz: d.replace(tzinfo=tz).isoformat(), st.datetimes(), offsets)
rfc3339_like = st.from_regex(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,12})?([Zz]|[+-]\d{2}:\d{2})?", fullmatch=True
)
edge_times = st.sampled_from(
    [
        "2026-10-08T12:20:00-07:00",
        "2099-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z",
        "9999-12-31T23:59:60Z",
        "9999-12-31T23:59:59-23:59",
        "0001-01-01T00:00:00+23:59",
        "2026-02-30T00:00:00Z",
        "2026-12-31T23:59:60Z",
        "2026-01-01T24:00:00Z",
        "2026-01-01T00:00:00+24:00",
        "2026-01-01T00:00:00",
        "2026-01-01T00:00:00.1234567890123Z",
        "",
    ]
)
timestamps = st.one_of(formatted_times, rfc3339_like, edge_times, st.text(max_size=30), json_values)

summaries = st.one_of(
    st.text(min_size=1, max_size=200),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=50),
    st.sampled_from(
        ["", "   ", "\x1b]52;c;ZXZpbA==\x07pay", "**x** [a](http://e) <img src=x>", "\ud800"]
    ),
    json_values,
)


def nested(depth: int, leaf: object = 1) -> object:
    value = leaf
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


terms_values = st.one_of(
    st.dictionaries(st.text(max_size=10), json_values, max_size=6),
    st.integers(1, 2500).map(lambda d: {"deep": nested(d)}),
    json_values,
    st.none(),
)


@st.composite
def operation_objects(draw) -> object:
    """Mostly near-valid operation objects: each field good, wrong, or missing."""
    if draw(st.integers(0, 19)) == 0:
        return draw(json_values)
    fields = {
        "operation_id": good_ids,
        "revision": good_ids,
        "summary": st.text(min_size=1, max_size=80),
        "expires_at": formatted_times,
    }
    bad = {"operation_id": ids, "revision": ids, "summary": summaries, "expires_at": timestamps}
    obj: dict[str, object] = {}
    for name, good in fields.items():
        roll = draw(st.integers(0, 9))
        if roll == 0:
            continue
        obj[name] = draw(bad[name] if roll <= 3 else good)
    if draw(st.booleans()):
        obj["terms"] = draw(terms_values)
    obj.update(draw(st.dictionaries(st.text(max_size=8), json_values, max_size=2)))
    return obj


def check_operation(op: Operation, source: object) -> None:
    assert isinstance(op, Operation)
    assert is_valid_id(op.operation_id) and is_valid_id(op.revision)
    assert isinstance(op.summary, str) and op.summary.strip()
    assert op.expires_at.tzinfo is not None
    assert op.terms is None or isinstance(op.terms, dict)
    json.loads(op.to_json())  # what the store keeps must round-trip


OPERATION_ERRORS = (InvalidOperation,)
MESSAGE_ERRORS = (InvalidOperation, InvalidMessage)


# ---- operations and their carriers -----------------------------------------------------------


@FUZZ
@given(operation_objects())
def test_parse_operation(obj):
    op, _ = guarded("parse_operation", OPERATION_ERRORS, parse_operation, obj)
    if op is not None:
        check_operation(op, obj)


@FUZZ
@given(
    st.sampled_from([403, 403, 403, 200, 400, 503]) | st.integers(100, 599),
    st.one_of(
        st.fixed_dictionaries(
            {
                "error": st.sampled_from(
                    ["approval_required", "approval_required", "invalid_session"]
                )
                | json_values
            },
            optional={"operation": operation_objects(), "error_description": json_values},
        ),
        json_values,
    ),
)
def test_operation_from_api_body(status, body):
    op, _ = guarded(
        "operation_from_api_body", OPERATION_ERRORS, operation_from_api_body, status, body
    )
    if op is not None:
        assert status == 403 and body["error"] == "approval_required"
        check_operation(op, body["operation"])


@FUZZ
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "isError": st.sampled_from([True, True, False, "true", 1, None]),
            "structuredContent": st.one_of(
                st.fixed_dictionaries({}, optional={"operation": operation_objects()}), json_values
            ),
            "content": json_values,
            "_meta": json_values,
        },
    )
)
def test_operation_from_mcp_result(result):
    op, _ = guarded(
        "operation_from_mcp_result", OPERATION_ERRORS, operation_from_mcp_result, result
    )
    if op is not None:
        assert result["isError"] is True
        check_operation(op, result["structuredContent"]["operation"])


messages = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"id": ids, "role": st.just("company"), "text": summaries},
        optional={
            "extensions": st.one_of(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "operations": st.one_of(
                            st.fixed_dictionaries(
                                {},
                                optional={
                                    "operation": operation_objects(),
                                    "approval": json_values,
                                },
                            ),
                            json_values,
                        )
                    },
                ),
                json_values,
            )
        },
    ),
)


@FUZZ
@given(messages)
def test_operation_from_message(message):
    op, _ = guarded("operation_from_message", MESSAGE_ERRORS, operation_from_message, message)
    if op is not None:
        check_operation(op, message)


@FUZZ
@given(timestamps)
def test_parse_rfc3339(text):
    value, _ = guarded("parse_rfc3339", (ValueError,), parse_rfc3339, text)
    if value is not None:
        assert isinstance(value, datetime) and value.tzinfo is not None


# ---- headers -------------------------------------------------------------------------------

sf_keys = st.sampled_from(
    ["operation_id", "revision", "Revision", "operation-id", "x", "*"]
) | st.from_regex(r"[a-z*][a-z0-9_.*-]{0,8}", fullmatch=True)
sf_values = st.one_of(
    good_ids.map(lambda s: f'"{s}"'),
    st.text(max_size=20).map(lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'),
    st.text(max_size=20).map(lambda s: f'"{s}"'),
    good_ids,  # a Token, or an Integer, or garbage
    st.integers().map(str),
    st.sampled_from(
        ["?1", "?0", ":aGVsbG8=:", '%"caf%c3%a9"', "1.5", "@1659578233", "()", '("a" "b")']
    ),
)
sf_dictionaries = st.lists(
    st.tuples(
        sf_keys,
        st.one_of(st.none(), sf_values),
        st.lists(st.tuples(sf_keys, sf_values), max_size=2),
    ),
    max_size=5,
).map(
    lambda members: ", ".join(
        k + ("" if v is None else "=" + v) + "".join(f";{pk}={pv}" for pk, pv in params)
        for k, v, params in members
    )
)
header_texts = st.one_of(
    sf_dictionaries,
    sf_dictionaries.map(lambda s: s.encode("ascii", "replace")),
    st.text(max_size=60),
    st.text(
        alphabet=st.characters(min_codepoint=0, max_codepoint=255), max_size=60
    ),  # latin-1, as httpx decodes
    st.binary(max_size=60),
)


@FUZZ
@given(header_texts)
def test_parse_approval_header(value):
    approval, _ = guarded("parse_approval_header", (InvalidApproval,), parse_approval_header, value)
    if approval is not None:
        assert isinstance(approval, Approval)
        assert is_valid_id(approval.operation_id) and is_valid_id(approval.revision)


sf_lists = st.lists(
    st.tuples(
        st.sampled_from(['"operations"', "operations", '"other"', "1", "(a b)", '""'])
        | st.text(max_size=10),
        st.lists(st.tuples(st.sampled_from(["v", "V", "x"]), sf_values), max_size=2),
    ),
    max_size=4,
).map(
    lambda items: ", ".join(
        name + "".join(f";{k}={v}" for k, v in params) for name, params in items
    )
)


@FUZZ
@given(st.one_of(st.none(), sf_lists, sf_lists.map(str.encode), header_texts))
def test_parse_extensions_header(value):
    declared, _ = guarded(
        "parse_extensions_header", (InvalidExtensions,), parse_extensions_header, value
    )
    if declared is not None:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in declared.items())
    flag, _ = guarded("declares_operations", (), declares_operations, value)
    assert flag in (None, True, False)


http_dates = st.builds(
    lambda d: format_datetime(d.replace(tzinfo=UTC), usegmt=True),
    st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(9999, 1, 1)),
)
retry_after_values = st.one_of(
    st.none(),
    st.integers(0, 10**6).map(str),
    st.from_regex(r"\s*\d{1,30}\s*", fullmatch=True),  # \d includes non-ASCII digits
    st.integers(300, 6000).map(lambda n: "9" * n),
    http_dates,
    http_dates.map(lambda s: s.replace("GMT", "PST")),
    st.sampled_from(
        [
            "-5",
            "1.5",
            "0",
            " 7 ",
            "Wed Oct 21 07:28:00 2015",
            "Wednesday, 21-Oct-15 07:28:00 GMT",
            "\xb2",
            "\u0663",
        ]
    ),
    st.text(max_size=40),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=255), max_size=40),
)


@FUZZ
@given(retry_after_values)
def test_parse_retry_after(value):
    seconds, _ = guarded("parse_retry_after", (), parse_retry_after, value)
    assert seconds is None or (
        isinstance(seconds, float) and seconds >= 0 and not math.isnan(seconds)
    )


# ---- discovery -----------------------------------------------------------------------------

urls = st.one_of(
    st.sampled_from(
        [
            "https://shop.example/api",
            "http://127.0.0.1:8080/mcp",
            "http://localhost/x",
            "http://[::1]:80/",
            "http://[",
            "https://[::1",
            "http://[zz]/",
            "https://user:pw@shop.example/",
            "https://shop.example:99999/",
            "javascript:alert(1)",
            "https:///nohost",
            "http://10.0.0.1/",
            "https://127.0.0.1/",
            "",
        ]
    ),
    st.from_regex(r"(https?|ftp|file|)://[^/\s]{0,20}(/[^\s]{0,10})?", fullmatch=True),
    st.text(max_size=30),
    json_values,
)


def mostly(good, bad, p_bad: int = 4):
    """`good` most of the time, `bad` one time in `p_bad`, so fuzzing gets past the early checks."""
    return st.integers(0, p_bad - 1).flatmap(lambda roll: bad if roll == 0 else good)


good_urls = st.sampled_from(
    ["https://shop.example/api", "http://127.0.0.1:8080/mcp", "https://shop.example/conv"]
)


@st.composite
def poppy_documents(draw) -> tuple[object, str, bool]:
    domain = draw(mostly(st.sampled_from(["shop.example", "127.0.0.1:8080"]), st.text(max_size=12)))
    if draw(st.integers(0, 19)) == 0:
        return draw(json_values), domain, draw(st.booleans())
    organization = draw(
        mostly(
            st.fixed_dictionaries(
                {
                    "name": mostly(
                        st.just("Manzanita Outfitters"),
                        st.sampled_from(["", " ", "x" * 201]) | summaries,
                    ),
                    "domain": mostly(
                        st.just(domain) | st.just(domain.upper()),
                        st.text(max_size=12) | json_values,
                    ),
                }
            ),
            json_values,
            8,
        )
    )
    doc: dict[str, object] = {
        "protocol_version": draw(
            mostly(st.just("0.4"), st.sampled_from(["0.3", "1.0", "0.4.1"]) | json_values, 8)
        ),
        "organization": organization,
    }
    api_entry = st.fixed_dictionaries(
        {
            "type": mostly(
                st.sampled_from(["openapi", "mcp"]),
                st.sampled_from(["graphql", "OpenAPI"]) | json_values,
            ),
            "url": mostly(good_urls, urls, 2),
        },
        optional={"description": json_values},
    )
    if draw(st.integers(0, 3)):
        doc["apis"] = draw(
            mostly(st.lists(mostly(api_entry, json_values, 8), max_size=3), json_values, 8)
        )
    if draw(st.booleans()):
        protocol = st.fixed_dictionaries(
            {"type": mostly(st.just("poppy"), json_values), "endpoint": mostly(good_urls, urls, 2)}
        )
        doc["agent"] = draw(
            mostly(
                st.fixed_dictionaries(
                    {
                        "protocols": mostly(
                            st.lists(mostly(protocol, json_values, 8), max_size=2), json_values, 8
                        )
                    }
                ),
                json_values,
                8,
            )
        )
    if draw(st.booleans()):
        doc["auth"] = draw(
            mostly(st.fixed_dictionaries({"issuer": mostly(good_urls, urls, 2)}), json_values, 8)
        )
    if draw(st.booleans()):
        version = mostly(st.just("2"), st.sampled_from(["2.1", "1", "20", " 2"]) | json_values)
        doc["extensions"] = draw(
            mostly(
                st.fixed_dictionaries(
                    {
                        "operations": mostly(
                            st.lists(
                                mostly(st.fixed_dictionaries({"version": version}), json_values, 8),
                                max_size=2,
                            ),
                            json_values,
                            8,
                        )
                    }
                ),
                json_values,
                8,
            )
        )
    if draw(st.integers(0, 4)) == 0:
        doc["web"] = draw(json_values)
    return doc, domain, draw(st.booleans())


@FUZZ
@given(poppy_documents())
def test_parse_poppy_json(case):
    doc, served_host, loopback = case
    parsed, _ = guarded(
        "parse_poppy_json", (InvalidDiscovery,), parse_poppy_json, doc, served_host, loopback
    )
    if parsed is not None:
        assert isinstance(parsed, CompanyDocument)
        assert parsed.domain.lower() == served_host.lower()
        for url in (
            [a.url for a in parsed.apis]
            + list(parsed.conversation_endpoints)
            + [parsed.issuer or "https://x"]
        ):
            assert url.startswith("https://") or (loopback and url.startswith("http://"))
    flag, _ = guarded(
        "document_supports_operations",
        (),
        document_supports_operations,
        (doc or {}).get("extensions") if isinstance(doc, dict) else doc,
    )
    assert flag in (None, True, False)


# ---- approvals (the demo Company reads these) -------------------------------------------------


@FUZZ
@given(
    st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {},
            optional={
                "personalagentprotocol.org/approval": st.fixed_dictionaries(
                    {}, optional={"operation_id": ids, "revision": ids}
                )
                | json_values,
                "io.modelcontextprotocol/clientInfo": json_values,
            },
        ),
    ),
    messages,
)
def test_approval_from_mcp_meta_and_message(meta, message):
    approval, _ = guarded(
        "approval_from_mcp_meta", (InvalidApproval,), approval_from_mcp_meta, meta
    )
    assert approval is None or is_valid_id(approval.operation_id)
    if isinstance(message, dict):
        approval, _ = guarded(
            "approval_from_message", (InvalidApproval,), approval_from_message, message
        )
        assert approval is None or is_valid_id(approval.revision)


# ---- Session JWTs (the demo Company verifies these) -------------------------------------------

_KEY = ec.generate_private_key(ec.SECP256R1())
_JWK = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(_KEY.public_key()))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


coordinates = st.one_of(
    st.binary(min_size=32, max_size=32).map(_b64),  # right size, almost never on the curve
    st.binary(min_size=31, max_size=33).map(_b64),
    st.text(max_size=8),
    json_values,
)
_good_jwk = st.fixed_dictionaries(
    {
        "kty": mostly(st.just("EC"), json_values, 10),
        "crv": mostly(st.just("P-256"), json_values, 10),
        "x": mostly(st.just(_JWK["x"]), coordinates, 3),
        "y": mostly(st.just(_JWK["y"]), coordinates, 3),
    }
)
jwk_values = mostly(
    _good_jwk,
    st.one_of(
        _good_jwk.map(lambda j: {**j, "d": "AAAA"}),
        _good_jwk.map(lambda j: {k: j[k] for k in ("kty", "crv")}),
        json_values,
    ),
    8,
)
headers = st.fixed_dictionaries(
    {
        "typ": mostly(st.just(SESSION_JWT_TYP), json_values, 10),
        "alg": mostly(
            st.just("ES256"), st.sampled_from(["none", "HS256", "EdDSA"]) | json_values, 10
        ),
        "jwk": jwk_values,
    }
).flatmap(lambda h: mostly(st.just(h), json_values.map(lambda kid: {**h, "kid": kid}), 10))
_NOW = int(datetime.now(UTC).timestamp())
_good_claims = {
    "iss": st.just("https://poppy-tui.invalid/agent.json"),
    "sub": good_ids,
    "aud": st.sampled_from(["aud", "https://shop.example"]),
    "sid": good_ids,
    "iat": st.integers(_NOW - 30, _NOW + 30),
    "exp": st.integers(_NOW + 60, _NOW + 200),
    "jti": good_ids,
}
claims = st.fixed_dictionaries(
    {
        name: mostly(
            good, st.one_of(st.text(max_size=10), st.integers(-(2**63), 2**63), json_values), 12
        )
        for name, good in _good_claims.items()
    }
).flatmap(  # sometimes one claim is missing
    lambda c: mostly(
        st.just(c),
        st.sampled_from(list(c)).map(lambda k: {n: v for n, v in c.items() if n != k}),
        8,
    )
)


@st.composite
def session_tokens(draw) -> object:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(
            st.one_of(
                st.none(),
                st.text(max_size=80),
                st.from_regex(r"[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*", fullmatch=True),
            )
        )
    header = draw(headers)
    body = draw(claims)
    if kind == 1:  # unsigned segments with arbitrary JSON
        parts = [json.dumps(header, allow_nan=True), json.dumps(body, allow_nan=True)]
        return (
            ".".join(_b64(p.encode("utf-8", "surrogatepass")) for p in parts)
            + "."
            + _b64(draw(st.binary(max_size=70)))
        )
    # really signed by a P-256 key, with odd headers and claims
    extra = {k: v for k, v in header.items() if k != "alg"}
    try:
        return jwt.encode(body, _KEY, algorithm="ES256", headers=extra)
    except (TypeError, ValueError, jwt.PyJWTError):
        return draw(st.text(max_size=20))


@FUZZ_SLOW
@given(session_tokens(), st.sampled_from(["aud", "https://shop.example"]))
def test_verify_session_jwt(token, audience):
    verified, _ = guarded(
        "verify_session_jwt",
        (InvalidSession,),
        verify_session_jwt,
        token,
        audience,
        _KEY.public_key(),
    )
    if verified is not None:
        assert isinstance(verified, VerifiedSession) and verified.client_id and verified.session_id


# ---- response classification and bounded JSON -------------------------------------------------


@FUZZ
@given(
    st.sampled_from([200, 201, 403, 409, 429, 500, 502, 503, 504]) | st.integers(100, 599),
    st.dictionaries(st.text(max_size=10), st.text(max_size=10), max_size=3),
    st.one_of(
        st.fixed_dictionaries(
            {
                "error": st.sampled_from(["approval_required", "operation_in_progress", "x"])
                | json_values
            },
            optional={"operation": operation_objects()},
        ),
        json_values,
    ),
    st.one_of(st.none(), st.floats(min_value=0, max_value=1e6)),
)
def test_classify_http(status, headers_, body, retry_after):
    outcome, _ = guarded("classify_http", (), classify_http, status, headers_, body, retry_after)
    assert outcome is None or isinstance(
        outcome,
        (Performed, ApprovalRequired, RetryLater, NotPerformed, Unknown, NotSent, BadResponse),
    )


@FUZZ
@given(
    st.one_of(
        st.binary(max_size=200),
        st.text(max_size=200),
        json_values.map(lambda v: json.dumps(v, allow_nan=True)),
        st.integers(1, 200_000).map(lambda n: "[" * n + "]" * n),
        st.integers(1, 200_000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    ),
    st.sampled_from([10, 1000, 8 * 1024 * 1024]),
)
def test_loads_bounded(data, limit):
    guarded("loads_bounded", (ValueError,), loads_bounded, data, limit)


# ---- what parses must be storable -------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory):
    from poppy_tui.agent.store import Store

    store = Store.open(tmp_path_factory.mktemp("fuzzstore") / "poppy.db")
    company = store.upsert_company("http://127.0.0.1:9", _demo_document())
    request_id = store.add_request(
        company.id, ApiRequest("POST", "http://127.0.0.1:9/api/x", {"a": 1}), "cli"
    )
    yield store, company, request_id
    store.close()


def _demo_document() -> CompanyDocument:
    return parse_poppy_json(
        {
            "protocol_version": "0.4",
            "organization": {"name": "Manzanita Outfitters", "domain": "127.0.0.1:9"},
            "apis": [{"type": "openapi", "url": "http://127.0.0.1:9/openapi.json"}],
            "extensions": {"operations": [{"version": "2"}]},
        },
        "127.0.0.1:9",
        allow_loopback_http=True,
    )


@settings(FUZZ, max_examples=250)
@given(operation_objects())
def test_every_parsed_operation_can_be_stored_and_read_back(fuzz_store, obj):
    """A Company's operation that passes validation must not crash the durable record."""
    from poppy_tui.agent.store import StateError, StoreError

    store, company, request_id = fuzz_store
    op, _ = guarded("parse_operation", OPERATION_ERRORS, parse_operation, obj)
    if op is None:
        return
    result, _ = guarded(
        "Store.record_operation",
        (StoreError, StateError),
        store.record_operation,
        company.id,
        request_id,
        company.session_id,
        op,
    )
    if result is None:
        return
    revision, _ = guarded("Store.read", (), store.get_revision, result.revision_id)
    if revision is None:
        return
    if result.new_revision:  # (a revision already kept is kept as first received)
        assert revision.summary == op.summary
        assert json.dumps(revision.terms, sort_keys=True) == json.dumps(
            None if op.terms is None else json.loads(op.terms_json), sort_keys=True
        )
        assert json.dumps(revision.raw, sort_keys=True) == json.dumps(
            json.loads(op.to_json()), sort_keys=True
        )
        rows, _ = guarded("Store.read", (), store.list_operations, limit=1)
        assert rows is None or (rows and rows[0].id == result.operation_row)


# ---- what parses must be showable and checkable -------------------------------------------------

fuzz_requests = st.one_of(
    st.none(),
    st.builds(
        lambda body: ApiRequest("POST", "http://127.0.0.1:9/api/orders/ord_7Hk2/exchanges", body),
        json_values,
    ),
)


@settings(FUZZ, max_examples=300)
@given(operation_objects(), operation_objects(), fuzz_requests)
def test_every_parsed_operation_can_be_rendered_and_checked(obj, previous_obj, request):
    """The review screen's path for Company input: parse, then render the summary and check the
    terms (against the request and the previous revision). Neither may raise."""
    from poppy_tui.safety.discrepancies import Finding, check_operation
    from poppy_tui.safety.summary import render_summary

    op, _ = guarded("parse_operation", OPERATION_ERRORS, parse_operation, obj)
    if op is None:
        return
    previous, _ = guarded("parse_operation", OPERATION_ERRORS, parse_operation, previous_obj)
    rendered, _ = guarded("render_summary", (), render_summary, op.summary)
    assert rendered is not None and isinstance(rendered.plain, str)
    findings, _ = guarded("check_operation", (), check_operation, op, request, previous)
    assert findings is not None and all(isinstance(f, Finding) for f in findings)
