"""Terms as key paths and values: walking, comparing and quoting them. No Textual.

Every Company value quoted in one of our messages goes through `_quote` (sanitised,
cut at 60 characters); table cells through `_shown` (sanitised, never cut).
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Any
from collections.abc import Iterable, Mapping

from poppy_tui.safety.sanitize import sanitize_line

__all__ = ["Path", "format_path", "terms_rows"]

_QUOTE_CHARS = 60
_UNBOUNDED = sys.maxsize

Path = tuple[Any, ...]
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_MAX_DEPTH = 64


def format_path(path: Iterable[Any]) -> str:
    """A key path for display: a.b[0]["odd key"]. Keys with dots or brackets are
    quoted, so a flat "price.amount" key can't pass for a nested one."""
    out: list[str] = []
    for element in path:
        if isinstance(element, int) and not isinstance(element, bool):
            out.append(f"[{element}]")
        elif isinstance(element, str) and _PLAIN_KEY.fullmatch(element):
            out.append(("." if out else "") + element)
        else:
            out.append("[" + json.dumps(str(element), ensure_ascii=False) + "]")
    return sanitize_line("".join(out), _UNBOUNDED).text


def _field(path: Path) -> str:
    shown = format_path(path)
    return "terms" + shown if shown.startswith("[") else "terms." + shown


def _flatten(value: Any) -> list[tuple[Path, Any]]:
    """Leaves in document order: scalars, and empty objects or arrays."""
    leaves: list[tuple[Path, Any]] = []
    stack: list[tuple[Path, Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, Mapping) and node and len(path) < _MAX_DEPTH:
            stack.extend(reversed([((*path, str(k)), v) for k, v in node.items()]))
        elif isinstance(node, (list, tuple)) and node and len(path) < _MAX_DEPTH:
            stack.extend(reversed([((*path, i), v) for i, v in enumerate(node)]))
        else:
            leaves.append((path, node))
    return leaves


def _dicts(value: Any) -> list[tuple[Path, Mapping[str, Any]]]:
    found: list[tuple[Path, Mapping[str, Any]]] = []
    stack: list[tuple[Path, Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        if len(path) >= _MAX_DEPTH:
            continue
        if isinstance(node, Mapping):
            found.append((path, node))
            stack.extend(reversed([((*path, str(k)), v) for k, v in node.items()]))
        elif isinstance(node, (list, tuple)):
            stack.extend(reversed([((*path, i), v) for i, v in enumerate(node)]))
    return found


def _norm_key(key: Any) -> str:
    """replacementSku ~ replacement_sku ~ Replacement-SKU."""
    text = unicodedata.normalize("NFKC", str(key)).casefold()
    return "".join(ch for ch in text if ch.isalnum())


def _joined(path: Path) -> str:
    return "".join(str(e) if isinstance(e, int) else _norm_key(e) for e in path)


def _leaf_key(path: Path) -> str | None:
    for element in reversed(path):
        if isinstance(element, str):
            return _norm_key(element)
    return None


_NUMBER_TEXT = re.compile(r"[-+]?\d+(?:\.\d+)?")


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        try:
            result = Decimal(repr(value))
        except InvalidOperation:
            return None
        return result if result.is_finite() else None
    if isinstance(value, str):
        text = value.strip()
        if len(text) <= 64 and _NUMBER_TEXT.fullmatch(text):
            return Decimal(text)
    return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _same_value(a: Any, b: Any) -> bool:
    """Equal as a Company would read them: 2 == "2", 70 == "70.00", True == "true"."""
    if type(a) is type(b) and a == b:
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        left, right = _as_bool(a), _as_bool(b)
        return left is not None and left == right
    left_number, right_number = _decimal(a), _decimal(b)
    if left_number is not None and right_number is not None:
        return left_number == right_number
    if a is None or b is None:
        return (a is None or a == "null") and (b is None or b == "null")
    if isinstance(a, (Mapping, list, tuple)) or isinstance(b, (Mapping, list, tuple)):
        return _canonical(a) == _canonical(b)
    return False


# Deeper than this is never shown: the protocol caps terms at 32 levels. Counted here, not left
# to json.dumps's RecursionError: from Python 3.12 on the C encoder's limit is not the
# interpreter's, and on 3.13 a value 5,000 deep is encoded whole.
SHOWN_DEPTH_MAX = 64


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests lists and mappings more than `limit` deep (without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, Mapping):
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend((child, depth + 1) for child in node)
    return False


def _canonical(value: Any) -> str:
    try:
        if _deeper_than(value, SHOWN_DEPTH_MAX):
            raise RecursionError
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except RecursionError:
        return (
            "(nested too deeply to show)"  # the protocol caps terms at 32 levels; this is not one
        )
    except (TypeError, ValueError):
        return repr(value)


def _display(value: Any) -> str:
    """A value for a table cell or a message: text as is, others as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and not value:
        return "{}"
    if isinstance(value, (list, tuple)) and not value:
        return "[]"
    return _canonical(value)


def _quote(value: Any) -> str:
    text = sanitize_line(_display(value), _QUOTE_CHARS).text
    return f'"{text}"' if isinstance(value, str) else text


def _shown(value: Any) -> str:
    return sanitize_line(_display(value), _UNBOUNDED).text


def terms_rows(terms: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(key path, value) for every leaf of the terms, sanitised, nothing truncated."""
    if not isinstance(terms, Mapping):
        return []
    return [(format_path(path), _shown(value)) for path, value in _flatten(terms) if path]
