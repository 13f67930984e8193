"""The approval (spec 6) and its three encodings: header, MCP _meta, conversation message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Mapping

import http_sfv

from poppy_tui.protocol.conventions import EXTENSION_NAME, MCP_APPROVAL_META_KEY
from poppy_tui.protocol.errors import InvalidApproval
from poppy_tui.protocol.ids import id_problem


@dataclass(frozen=True)
class Approval:
    """The User approved this revision of this operation."""

    operation_id: str
    revision: str

    def __post_init__(self) -> None:
        for name in ("operation_id", "revision"):
            problem = id_problem(getattr(self, name))
            if problem:
                raise InvalidApproval(name, problem)

    def as_object(self) -> dict[str, str]:
        return {"operation_id": self.operation_id, "revision": self.revision}


def encode_approval_header(approval: Approval) -> str:
    """`Poppy-Approval` as an RFC 9651 Dictionary of Strings.

    Written out here rather than through http_sfv's Dictionary (which parses it, and which the
    tests hold this to, byte for byte): two fixed keys and two sf-strings are a few lines, and
    building the library's objects cost about ten times as much (~20 µs per approval sent)."""
    return f"operation_id={_sf_string(approval.operation_id)}, revision={_sf_string(approval.revision)}"


def _sf_string(value: str) -> str:
    """An RFC 9651 sf-string (3.3.3): printable ASCII only, with DQUOTE and backslash escaped."""
    if not value.isascii() or not value.isprintable():
        # IDs are validated already (ids.id_problem); this guards a later change to that check.
        raise InvalidApproval(
            "Poppy-Approval", f"a string member holds a character RFC 9651 strings can't: {value!r}"
        )
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_approval_header(value: str | bytes) -> Approval:
    """Parse `Poppy-Approval`. Unknown members are ignored, as the spec requires of Companies."""
    try:
        raw = value.encode("ascii") if isinstance(value, str) else value
    except UnicodeEncodeError:
        raise InvalidApproval("Poppy-Approval", "must be ASCII (RFC 9651)") from None
    if not raw.strip():
        raise InvalidApproval("Poppy-Approval", "is empty")
    d = http_sfv.Dictionary()
    try:
        d.parse(raw)
    except ValueError as exc:
        raise InvalidApproval(
            "Poppy-Approval", f"is not a structured-field Dictionary ({exc})"
        ) from None
    values: dict[str, str] = {}
    for name in ("operation_id", "revision"):
        if name not in d:
            raise InvalidApproval(f"Poppy-Approval.{name}", "is required but missing")
        member = d[name]
        item_value = getattr(member, "value", None)
        if type(item_value) is not str:  # http_sfv.Token subclasses str; only sf-strings count.
            raise InvalidApproval(f"Poppy-Approval.{name}", "must be a String (in double quotes)")
        values[name] = item_value
    return Approval(**values)


def approval_to_mcp_meta(approval: Approval) -> dict[str, Any]:
    return {MCP_APPROVAL_META_KEY: approval.as_object()}


def approval_from_mcp_meta(meta: Mapping[str, Any] | None) -> Approval | None:
    if not meta or MCP_APPROVAL_META_KEY not in meta:
        return None
    return _approval_from_object(meta[MCP_APPROVAL_META_KEY], f"_meta.{MCP_APPROVAL_META_KEY}")


def approval_to_message_extensions(approval: Approval) -> dict[str, Any]:
    return {EXTENSION_NAME: {"approval": approval.as_object()}}


def approval_from_message(message: Mapping[str, Any]) -> Approval | None:
    """The approval in a Personal Agent message. The message's text never counts."""
    extensions = message.get("extensions")
    if not isinstance(extensions, dict):
        return None
    content = extensions.get(EXTENSION_NAME)
    if not isinstance(content, dict) or "approval" not in content:
        return None
    return _approval_from_object(content["approval"], "message.extensions.operations.approval")


def _approval_from_object(obj: object, where: str) -> Approval:
    if not isinstance(obj, dict):
        raise InvalidApproval(where, "must be a JSON object")
    for name in ("operation_id", "revision"):
        if name not in obj:
            raise InvalidApproval(f"{where}.{name}", "is required but missing")
    try:
        return Approval(operation_id=obj["operation_id"], revision=obj["revision"])
    except InvalidApproval as exc:
        raise InvalidApproval(f"{where}.{exc.field}", exc.reason) from None
