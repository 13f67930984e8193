"""The operation (spec 3) and how each interface carries it (spec 4)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from collections.abc import Mapping

from poppy_tui.protocol.conventions import MAX_SUMMARY_BYTES, MAX_TERMS_BYTES, MAX_TERMS_DEPTH
from poppy_tui.protocol.errors import InvalidMessage, InvalidOperation
from poppy_tui.protocol.ids import id_problem
from poppy_tui.protocol.jsonlimits import canonical_json, json_depth, lone_surrogate
from poppy_tui.protocol.timestamps import parse_rfc3339

REQUIRED_FIELDS = ("operation_id", "revision", "summary", "expires_at")


@dataclass(frozen=True)
class Operation:
    """One revision of one operation, validated. `raw` keeps the object exactly as received."""

    operation_id: str
    revision: str
    summary: str
    expires_at: datetime
    expires_at_text: str
    terms: Mapping[str, Any] | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def terms_json(self) -> str | None:
        return None if self.terms is None else canonical_json(self.terms)

    def to_json(self) -> str:
        return json.dumps(self.raw, ensure_ascii=False)

    def same_terms_as(self, other: Operation) -> bool:
        return (
            self.summary == other.summary
            and self.terms_json == other.terms_json
            and self.expires_at == other.expires_at
        )


def parse_operation(obj: object, where: str = "operation") -> Operation:
    """Validate an operation object; every rejection names the field."""
    if not isinstance(obj, dict):
        raise InvalidOperation(where, f"must be a JSON object, got {_json_type(obj)}")
    for name in REQUIRED_FIELDS:
        if name not in obj:
            raise InvalidOperation(f"{where}.{name}", "is required but missing")
    for name in ("operation_id", "revision"):
        problem = id_problem(obj[name])
        if problem:
            raise InvalidOperation(f"{where}.{name}", problem)
    summary = obj["summary"]
    if not isinstance(summary, str):
        raise InvalidOperation(f"{where}.summary", f"must be a string, got {_json_type(summary)}")
    if not summary.strip():
        raise InvalidOperation(f"{where}.summary", "must not be empty")
    size = len(
        summary.encode("utf-8", "surrogatepass")
    )  # counted before the lone-surrogate check below
    if size > MAX_SUMMARY_BYTES:
        raise InvalidOperation(
            f"{where}.summary", f"is {size} bytes, more than the {MAX_SUMMARY_BYTES} allowed"
        )
    try:
        expires_at = parse_rfc3339(obj["expires_at"])
    except ValueError as exc:
        raise InvalidOperation(f"{where}.expires_at", str(exc)) from None
    terms = obj.get("terms")
    if "terms" in obj and terms is None:
        raise InvalidOperation(f"{where}.terms", "must be a JSON object when present, got null")
    if terms is not None:
        if not isinstance(terms, dict):
            raise InvalidOperation(
                f"{where}.terms", f"must be a JSON object, got {_json_type(terms)}"
            )
        if json_depth(terms, MAX_TERMS_DEPTH) > MAX_TERMS_DEPTH:
            raise InvalidOperation(f"{where}.terms", f"nests deeper than {MAX_TERMS_DEPTH} levels")
        terms_size = len(canonical_json(terms).encode("utf-8", "surrogatepass"))
        if terms_size > MAX_TERMS_BYTES:
            raise InvalidOperation(
                f"{where}.terms", f"is {terms_size} bytes, more than the {MAX_TERMS_BYTES} allowed"
            )
    bad = lone_surrogate(obj)
    if bad is not None:
        path, code_point = bad
        raise InvalidOperation(
            f"{where}{path}", f"holds a lone surrogate ({code_point}), which is not a character"
        )
    return Operation(
        operation_id=obj["operation_id"],
        revision=obj["revision"],
        summary=summary,
        expires_at=expires_at,
        expires_at_text=obj["expires_at"],
        terms=terms,
        raw=obj,
    )


def operation_from_api_body(status: int, body: object) -> Operation | None:
    """The operation in an API refusal (403, error approval_required), or None if it is not one."""
    if status != 403 or not isinstance(body, dict) or body.get("error") != "approval_required":
        return None
    if "operation" not in body:
        raise InvalidOperation(
            "operation", "is required in an approval_required response but missing"
        )
    return parse_operation(body["operation"])


def operation_from_mcp_result(result: Mapping[str, Any]) -> Operation | None:
    """The operation in an MCP tool result (wire names), or None if it carries none."""
    if result.get("isError") is not True:
        return None
    structured = result.get("structuredContent")
    if not isinstance(structured, dict) or "operation" not in structured:
        return None
    return parse_operation(structured["operation"], "structuredContent.operation")


def operation_from_message(message: object) -> Operation | None:
    """The operation in a Company conversation message, or None if it carries none."""
    if not isinstance(message, dict):
        raise InvalidMessage("message", f"must be a JSON object, got {_json_type(message)}")
    extensions = message.get("extensions")
    if extensions is None:
        return None
    if not isinstance(extensions, dict):
        raise InvalidMessage("message.extensions", "must be a JSON object")
    content = extensions.get("operations")
    if content is None:
        return None
    if not isinstance(content, dict):
        raise InvalidMessage("message.extensions.operations", "must be a JSON object")
    if "operation" not in content:
        return None
    return parse_operation(content["operation"], "message.extensions.operations.operation")


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
