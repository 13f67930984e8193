"""Loads the hostile corpus in tests/safety/corpus/*.json.

Inputs may be {"repeat": s, "times": n} so huge cases stay small on disk.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, UTC
from pathlib import Path
from typing import Any

from poppy_tui.protocol.operation import Operation
from poppy_tui.protocol.requests import ApiRequest, ConversationRequest, McpRequest
from poppy_tui.protocol.timestamps import format_rfc3339

CORPUS = Path(__file__).parent / "corpus"
NOW = datetime(2026, 10, 8, 19, 0, 0, tzinfo=UTC)


def load(name: str) -> dict[str, Any]:
    with open(CORPUS / f"{name}.json", encoding="utf-8") as handle:
        return json.load(handle)


def expand(value: Any) -> Any:
    if isinstance(value, dict) and "repeat" in value:
        return value.get("prefix", "") + value["repeat"] * value["times"] + value.get("suffix", "")
    return value


def cases(name: str) -> list[dict[str, Any]]:
    return load(name)["cases"]


def _request(spec: Any, requests: dict[str, Any]) -> Any:
    if isinstance(spec, str):
        spec = requests[spec]
    if spec is None:
        return None
    kind = spec["kind"]
    if kind == "api":
        return ApiRequest(spec["method"], spec["url"], spec.get("body"))
    if kind == "mcp":
        return McpRequest(spec["server_url"], spec["tool"], spec["arguments"])
    return ConversationRequest(
        "https://chat.example.com/conversations",
        "conv_1",
        "msg_1",
        spec.get("text", "please do it"),
    )


def _operation(spec: dict[str, Any], bases: dict[str, Any]) -> Operation:
    merged = copy.deepcopy(bases[spec["base"]])
    merged.update({k: v for k, v in spec.items() if k != "base"})
    expires_at = NOW + timedelta(seconds=merged.get("expires_in", 3600))
    return Operation(
        operation_id=merged.get("operation_id", "exc_5Rt2"),
        revision=merged.get("revision", "r1"),
        summary=expand(merged["summary"]),
        expires_at=expires_at,
        expires_at_text=format_rfc3339(expires_at),
        terms=merged.get("terms"),
    )


def finding_case(case: dict[str, Any]) -> tuple[Operation, Any, Operation | None]:
    data = load("findings")
    bases, requests = data["bases"], data["requests"]
    operation = _operation(case, bases)
    request_spec = case["request"] if "request" in case else bases[case["base"]]["request"]
    previous = _operation(case["previous"], bases) if "previous" in case else None
    return operation, _request(request_spec, requests), previous
