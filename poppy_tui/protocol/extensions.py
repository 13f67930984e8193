"""Extension negotiation (spec 2): `Poppy-Extensions` and poppy.json `extensions`."""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

import http_sfv

from poppy_tui.protocol.conventions import EXTENSION_MAJOR, EXTENSION_NAME, EXTENSION_VERSION
from poppy_tui.protocol.errors import InvalidExtensions


def encode_extensions_header(declared: Mapping[str, str]) -> str:
    """e.g. {"operations": "2"} -> `"operations";v="2"`."""
    members = http_sfv.List()
    for name, version in declared.items():
        item = http_sfv.Item(name)
        item.params["v"] = version
        members.append(item)
    return str(members)


OPERATIONS_HEADER_VALUE = encode_extensions_header({EXTENSION_NAME: EXTENSION_VERSION})


def parse_extensions_header(value: str | bytes | None) -> dict[str, str]:
    """Name -> declared version. Members we can't read are skipped, not fatal."""
    if value is None:
        return {}
    try:
        raw = value.encode("ascii") if isinstance(value, str) else value
    except UnicodeEncodeError:
        raise InvalidExtensions("Poppy-Extensions", "must be ASCII (RFC 9651)") from None
    if not raw.strip():
        return {}
    members = http_sfv.List()
    try:
        members.parse(raw)
    except ValueError as exc:
        raise InvalidExtensions(
            "Poppy-Extensions", f"is not a structured-field List ({exc})"
        ) from None
    declared: dict[str, str] = {}
    for member in members:
        name = getattr(member, "value", None)
        params = getattr(member, "params", {})
        version = params.get("v") if params else None
        if isinstance(name, str) and isinstance(version, str):
            declared[str(name)] = version
    return declared


def major_of(version: str) -> str:
    return version.split(".", 1)[0]


def declares_operations(header_value: str | bytes | None) -> bool:
    try:
        declared = parse_extensions_header(header_value)
    except InvalidExtensions:
        return False
    version = declared.get(EXTENSION_NAME)
    return version is not None and major_of(version) == EXTENSION_MAJOR


def document_supports_operations(extensions: object) -> bool:
    """poppy.json `extensions.operations` lists version "2" (another major is not support)."""
    if not isinstance(extensions, dict):
        return False
    entries = extensions.get(EXTENSION_NAME)
    if not isinstance(entries, list):
        return False
    return any(
        isinstance(entry, dict)
        and isinstance(entry.get("version"), str)
        and major_of(entry["version"]) == EXTENSION_MAJOR
        for entry in entries
    )


def operations_extension_entry() -> dict[str, Any]:
    return {EXTENSION_NAME: [{"version": EXTENSION_VERSION}]}
