"""Our request against the terms: every field we sent must say the same there (Ops §5). No Textual."""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Mapping
from urllib.parse import unquote

from poppy_tui.protocol.requests import ApiRequest, ConversationRequest, McpRequest
from poppy_tui.safety.findings import _Findings
from poppy_tui.safety.sanitize import sanitize_line
from poppy_tui.safety.terms_values import (
    Path,
    _field,
    _flatten,
    _joined,
    _leaf_key,
    _norm_key,
    _quote,
    _same_value,
    format_path,
)

_GENERIC_LEAVES = frozenset(
    {
        "id",
        "type",
        "name",
        "value",
        "amount",
        "currency",
        "code",
        "key",
        "kind",
        "status",
        "description",
        "note",
        "notes",
    }
)
_ID_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.~:-]*")
_VERSION_SEGMENT = re.compile(r"v\d+(?:\.\d+)*", re.IGNORECASE)
_ID_SUFFIXES = ("", "id", "number", "no", "num", "ref", "reference", "code", "key")


class _TermsIndex:
    def __init__(self, terms: Mapping[str, Any]) -> None:
        self.leaves = [(p, v) for p, v in _flatten(terms) if p]
        self.by_joined: dict[str, list[tuple[Path, Any]]] = {}
        self.by_leaf: dict[str, list[tuple[Path, Any]]] = {}
        self.by_tail: dict[str, list[tuple[Path, Any]]] = {}
        for path, value in self.leaves:
            self.by_joined.setdefault(_joined(path), []).append((path, value))
            leaf = _leaf_key(path)
            if leaf is not None:
                self.by_leaf.setdefault(leaf, []).append((path, value))
            keys = [_norm_key(e) for e in path if isinstance(e, str)]
            self.by_tail.setdefault(keys[-1] if keys else "", []).append((path, value))
            if len(keys) >= 2:
                self.by_tail.setdefault(keys[-2] + keys[-1], []).append((path, value))


def _request_leaves(request: Any) -> list[tuple[str, Path, Any]]:
    """(where, path, value) for every field we sent."""
    out: list[tuple[str, Path, Any]] = []
    if isinstance(request, ApiRequest):
        if request.body is not None:
            out.extend(("request body field", p, v) for p, v in _flatten(request.body) if p)
        try:
            query = request.query
        except ValueError:
            query = {}
        out.extend(("query parameter", (k,), v) for k, v in query.items())
    elif isinstance(request, McpRequest) and isinstance(request.arguments, Mapping):
        out.extend(("tool argument", p, v) for p, v in _flatten(request.arguments) if p)
    return out


def _path_ids(request: Any) -> list[tuple[str | None, str]]:
    """(collection stem, segment) for URL path segments that look like IDs."""
    if not isinstance(request, ApiRequest):
        return []
    try:
        segments = [unquote(s) for s in request.path.split("/") if s]
    except ValueError:
        return []
    found: list[tuple[str | None, str]] = []
    for index, segment in enumerate(segments):
        if not _ID_SEGMENT.fullmatch(segment) or _VERSION_SEGMENT.fullmatch(segment):
            continue
        if not (any(ch.isdigit() for ch in segment) or "_" in segment):
            continue
        stem = None
        if index:
            previous = _norm_key(segments[index - 1])
            if previous.endswith("ies"):
                stem = previous[:-3] + "y"
            elif previous.endswith(("ses", "xes")):
                stem = previous[:-2]
            elif previous.endswith("s"):
                stem = previous[:-1]
            else:
                stem = previous
        found.append((stem, segment))
    return found


def _check_request(findings: _Findings, index: _TermsIndex, request: Any) -> None:
    leaves = _request_leaves(request)
    leaf_counts: dict[str, int] = {}
    for _, path, _ in leaves:
        leaf = _leaf_key(path)
        if leaf is not None:
            leaf_counts[leaf] = leaf_counts.get(leaf, 0) + 1
    for where, path, value in leaves:
        candidates = index.by_joined.get(_joined(path))
        if not candidates:
            leaf = _leaf_key(path)
            if (
                leaf
                and leaf not in _GENERIC_LEAVES
                and len(index.by_leaf.get(leaf, ())) == 1
                and leaf_counts.get(leaf) == 1
            ):
                candidates = index.by_leaf[leaf]
        if not candidates:
            continue
        if any(_same_value(value, terms_value) for _, terms_value in candidates):
            continue
        terms_path, terms_value = candidates[0]
        findings.add(
            "request_mismatch",
            f"You asked for {format_path(path)} = {_quote(value)} ({where}), "
            f"but the terms say {format_path(terms_path)} = {_quote(terms_value)}.",
            _field(terms_path),
        )
    for stem, segment in _path_ids(request):
        if not stem:
            continue
        candidates = []
        for suffix in _ID_SUFFIXES:
            candidates.extend(index.by_tail.get(stem + suffix, ()))
        if not candidates or any(_same_value(segment, v) for _, v in candidates):
            continue
        terms_path, terms_value = candidates[0]
        findings.add(
            "request_mismatch",
            f"You asked about {sanitize_line(stem, 30).text} {_quote(segment)} (in the request URL), "
            f"but the terms say {format_path(terms_path)} = {_quote(terms_value)}.",
            _field(terms_path),
        )


_WORD_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]")


def _request_values(request: Any) -> set[str]:
    """Every value we sent; for a conversation, the tokens of the person's own message
    (an ID they typed themselves is one they know)."""
    values = {
        str(v)
        for _, _, v in _request_leaves(request)
        if isinstance(v, (str, int)) and not isinstance(v, bool)
    }
    if isinstance(request, ConversationRequest) and isinstance(request.text, str):
        values.update(_WORD_TOKEN.findall(request.text[:10_000]))
    values.update(segment for _, segment in _path_ids(request))
    return values
