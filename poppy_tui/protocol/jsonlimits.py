"""Bounds on JSON from a Company: size and depth, checked before we keep it."""

from __future__ import annotations

import json
import math
from typing import Any


def json_depth(value: Any, limit: int) -> int:
    """Depth of nested containers, stopping early once `limit` is exceeded. Walks one level at a
    time, so the work per value stays in C (list.extend) rather than a Python loop per item."""
    depth = 0
    level = [value]
    while level:
        containers = [item for item in level if isinstance(item, (dict, list))]
        if not containers:
            break
        depth += 1
        if depth > limit:
            break
        level = []
        for item in containers:
            level.extend(item.values() if isinstance(item, dict) else item)
    return depth


def lone_surrogate(value: Any) -> tuple[str, str] | None:
    """(path, code point) of the first string (key or value) holding a lone surrogate, or None.
    JSON can spell one ("\\ud800") but it is no character: it can't be shown, stored as UTF-8 or
    compared, so Company input holding one is refused (I-JSON, RFC 7493, refuses it too)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            bad = _surrogate(item)
            if bad:
                return path, bad
        elif isinstance(item, dict):
            for key, child in item.items():
                bad = _surrogate(key) if isinstance(key, str) else None
                if bad:
                    return f"{path}.{key!a}", bad
                stack.append((child, f"{path}.{key}"))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{index}]") for index, child in enumerate(item))
    return None


def _surrogate(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"U+{ord(text[exc.start]):04X}"
    return None


class MalformedJson(ValueError):
    """JSON that parses, but not one way only or not as I-JSON (RFC 7493) allows: refused."""


class DuplicateMember(MalformedJson):
    """A JSON object names the same member twice. Parsers disagree on which one counts (the
    first, the last, both), so a Company document like that means different things to different
    readers: it is refused as malformed, never read one way."""

    def __init__(self, name: str) -> None:
        self.name = name
        shown = name if len(name) <= 80 else name[:80] + "..."
        super().__init__(f"the member {shown!a} appears twice in one object")


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # in C; a name given twice leaves fewer members than pairs
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateMember(key)
            seen.add(key)
    return result


class NonFiniteNumber(MalformedJson):
    """NaN, Infinity, -Infinity (which JSON doesn't have, though Python's json reads them) or a
    number too large for a double (1e999, which Python reads as infinity). I-JSON (RFC 7493
    2.2) refuses both: an amount that reads as infinity could never be checked or shown."""

    def __init__(self, text: str) -> None:
        shown = text if len(text) <= 40 else text[:40] + "..."
        super().__init__(f"the number {shown!a} is not a finite number")


def _refuse_constant(text: str) -> Any:
    raise NonFiniteNumber(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise NonFiniteNumber(text)
    return value


def loads_strict(data: bytes | str) -> Any:
    """json.loads that refuses duplicate member names (DuplicateMember) and numbers that aren't
    finite (NonFiniteNumber), both MalformedJson, a ValueError. Every JSON document from a
    Company is read with this."""
    return json.loads(
        data,
        object_pairs_hook=_refuse_duplicates,
        parse_constant=_refuse_constant,
        parse_float=_finite_float,
    )


def canonical_json(value: Any) -> str:
    """One spelling for a JSON value, for hashing and comparing."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def loads_bounded(data: bytes | str, max_bytes: int) -> Any:
    """json.loads with a size bound; raises ValueError with a reason."""
    size = len(data.encode("utf-8") if isinstance(data, str) else data)
    if size > max_bytes:
        raise ValueError(f"is {size} bytes, more than the {max_bytes} allowed")
    try:
        return loads_strict(data)
    except MalformedJson as exc:
        raise ValueError(f"is malformed: {exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"is not valid JSON ({exc})") from None
    except RecursionError:
        raise ValueError("nests too deeply") from None
