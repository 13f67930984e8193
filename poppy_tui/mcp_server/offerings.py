"""What a Company offers, for an MCP client choosing a request: its API operations (from its
OpenAPI document, with their parameters and request body schema) and its MCP tools (with their
input schemas). Every string in them is the Company's and is sanitised (company_text.value)."""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

from poppy_tui.mcp_server import company_text
from poppy_tui.protocol import openapi

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
# Local $refs are inlined this deep; a deeper or cyclic reference stays a {"$ref": ...}.
REF_DEPTH = 8
MAX_OPERATIONS = 500


def _inline(document: Mapping[str, Any], schema: Any, depth: int = 0) -> Any:
    """The schema with local $refs (#/components/...) replaced by what they point to."""
    if isinstance(schema, Mapping):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/") and depth < REF_DEPTH:
            node: Any = document
            for part in ref[2:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                node = node.get(part) if isinstance(node, Mapping) else None
            return _inline(document, node, depth + 1) if node is not None else dict(schema)
        return {k: _inline(document, v, depth) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_inline(document, v, depth) for v in schema]
    return schema


def api_operations(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    operations: list[dict[str, Any]] = []
    for path, method, op, declared in openapi.operations(document, HTTP_METHODS):
        if len(operations) >= MAX_OPERATIONS:
            break
        entry: dict[str, Any] = {"method": method.upper(), "path": path}
        for key in ("operationId", "summary", "description"):
            if op.get(key) is not None:
                entry[key] = op[key]
        parameters = [_inline(document, p) for p in declared]
        if parameters:
            entry["parameters"] = parameters
        body = _inline(document, op.get("requestBody"))
        content = body.get("content") if isinstance(body, Mapping) else None
        media = content.get("application/json") if isinstance(content, Mapping) else None
        if isinstance(media, Mapping) and media.get("schema") is not None:
            entry["body_schema"] = media["schema"]
        if op.get("x-poppy-approval") is True:
            entry["needs_approval"] = True
        operations.append(entry)
    return [company_text.value(o) for o in operations]


def mcp_tools(tools: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    listed = []
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        entry = {
            k: tool.get(k)
            for k in ("name", "title", "description", "inputSchema")
            if tool.get(k) is not None
        }
        listed.append(company_text.value(entry))
    return listed
