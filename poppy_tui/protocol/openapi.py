"""Walking a Company's OpenAPI document (untrusted JSON): the operations it offers, with the
parameters that apply to each. Pure; what to make of each operation is the caller's."""

from __future__ import annotations

from typing import Any, Iterator, Mapping


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def operations(document: Mapping[str, Any], methods: tuple[str, ...]) -> Iterator[tuple[str, str, Mapping[str, Any], list[Any]]]:
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
