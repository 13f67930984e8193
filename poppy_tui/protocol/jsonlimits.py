"""Bounds on JSON from a Company: size and depth, checked before we keep it."""

from __future__ import annotations

import json
from typing import Any


def json_depth(value: Any, limit: int) -> int:
    """Depth of nested containers, stopping early once `limit` is exceeded."""
    stack = [(value, 1)]
    deepest = 0
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def canonical_json(value: Any) -> str:
    """One spelling for a JSON value, for hashing and comparing."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def loads_bounded(data: bytes | str, max_bytes: int) -> Any:
    """json.loads with a size bound; raises ValueError with a reason."""
    size = len(data.encode("utf-8") if isinstance(data, str) else data)
    if size > max_bytes:
        raise ValueError(f"is {size} bytes, more than the {max_bytes} allowed")
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"is not valid JSON ({exc})") from None
    except RecursionError:
        raise ValueError("nests too deeply") from None
