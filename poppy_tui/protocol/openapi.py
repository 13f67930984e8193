"""Walking a Company's OpenAPI document (untrusted JSON): the operations it offers, with the
parameters that apply to each, and the GET that reads the resource a request acts on. Pure; what
to make of each operation is the caller's."""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Iterator, Mapping
from urllib.parse import urlsplit, urlunsplit

_TEMPLATE_PART = re.compile(r"^\{[^{}/]+\}$")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def operations(
    document: Mapping[str, Any], methods: tuple[str, ...]
) -> Iterator[tuple[str, str, Mapping[str, Any], list[Any]]]:
    """(path, method, operation object, parameters) for every operation under `paths` whose
    method (lower case) is in `methods`, in the document's order of paths and `methods`' order
    within a path. Parameters are the path item's shared ones, then the operation's own, as
    written ($refs unresolved). Anything not shaped as OpenAPI says is skipped."""
    paths = document.get("paths")
    if not isinstance(paths, Mapping):
        return
    for path, item in paths.items():
        if not isinstance(item, Mapping):
            continue
        shared = _list(item.get("parameters"))
        for method in methods:
            op = item.get(method)
            if isinstance(op, Mapping):
                yield path, method, op, [*shared, *_list(op.get("parameters"))]


def resource_url(request_url: str, openapi: Any) -> str | None:
    """The URL of a GET in the Company's OpenAPI for the resource a request acted on: the
    longest path template with a `get` that matches the request's path or a prefix of it
    (after any base path), on the request's own origin. None when the OpenAPI offers none.
    One rule for every caller: the outcome probe (after an unknown outcome, Ops 7) and the read
    before the decision (agent/resource_read.py).

    It must read one resource, never a collection: the template ends with a parameter (an ID),
    matched by a real value (not `.` or `..`), and names at least one fixed segment, so `/{id}`
    can't take a base path such as `/api` for an ID. And it never touches the action: the GET is
    a path strictly above the request's own (`/orders/ord_1` for `/orders/ord_1/returns`), never
    that path itself or one below it, whatever template matches (a catch-all
    `/api/{kind}/{id}/{verb}` with a `get` would otherwise read the action's own URL, which is
    safe only if the Company honours GET's semantics there)."""
    paths = openapi.get("paths") if isinstance(openapi, dict) else None
    if not isinstance(paths, dict):
        return None
    parts = urlsplit(request_url)
    segments = [s for s in parts.path.split("/") if s]
    best: tuple[int, int] | None = None  # (segments matched up to, base length)
    for template, item in paths.items():
        if not isinstance(template, str) or not isinstance(item, dict) or "get" not in item:
            continue
        pattern = [s for s in template.split("/") if s]
        if not _names_one_resource(pattern):
            continue
        for base in range(len(segments) - len(pattern) + 1):
            window = segments[base : base + len(pattern)]
            if base + len(pattern) >= len(segments):
                break  # the request's own path: never read
            if all(_matches(p, s) for p, s in zip(pattern, window, strict=True)):
                end = base + len(pattern)
                if best is None or end > best[0] or (end == best[0] and base < best[1]):
                    best = (end, base)
                break
    if best is None:
        return None
    path = "/" + "/".join(segments[: best[0]])
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _names_one_resource(pattern: list[str]) -> bool:
    return (
        bool(pattern)
        and _TEMPLATE_PART.match(pattern[-1]) is not None
        and any(_TEMPLATE_PART.match(p) is None for p in pattern)
    )


def _matches(pattern_part: str, segment: str) -> bool:
    if _TEMPLATE_PART.match(pattern_part):
        return segment not in (".", "..") and segment.lower() not in (
            "%2e",
            "%2e%2e",
            ".%2e",
            "%2e.",
        )
    return pattern_part == segment
