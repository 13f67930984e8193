"""From a Company's OpenAPI document or MCP tool list to forms, and from filled forms to requests.

Pure Python, no Textual: the composer screen draws what this describes. Everything here is
Company-supplied data; the screen shows it only through poppy_tui.ui.safe.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal
from collections.abc import Mapping
from urllib.parse import quote, urlencode

from poppy_tui.protocol import openapi

HTTP_METHODS = ("get", "post", "put", "patch", "delete")
_REF_DEPTH = 16


class FormError(ValueError):
    """A value the person typed doesn't fit the schema; the message names the field."""


@dataclass(frozen=True)
class FormField:
    name: str
    location: Literal["path", "query", "body", "argument"]
    type: (
        str  # string, integer, number, boolean, object, array (or "" when the schema says nothing)
    )
    required: bool = False
    title: str = ""
    description: str = ""
    enum: tuple[Any, ...] = ()
    default: Any = None
    example: Any = None

    @property
    def key(self) -> str:
        return f"{self.location}:{self.name}"


@dataclass(frozen=True)
class Action:
    """One thing the person can ask a Company to do: an API operation or an MCP tool."""

    kind: Literal["api", "mcp"]
    name: str  # operationId / tool name
    title: str
    description: str = ""
    method: str = ""  # api only
    path: str = ""  # api only
    fields: tuple[FormField, ...] = ()
    has_body: bool = False  # api only: the operation takes a JSON request body
    raw_body: bool = False  # the body schema has no properties to build inputs from: take JSON
    needs_approval: bool = False

    @property
    def label(self) -> str:
        if self.kind == "api":
            return f"{self.method.upper()} {self.path}"
        return f"tool {self.name}"


def _resolve(document: Mapping[str, Any], schema: Any, depth: int = 0) -> dict[str, Any]:
    """Follow local $refs (#/components/...); anything else is left as an empty schema."""
    while isinstance(schema, Mapping) and "$ref" in schema and depth < _REF_DEPTH:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return {}
        node: Any = document
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part) if isinstance(node, Mapping) else None
        schema = node
        depth += 1
    return dict(schema) if isinstance(schema, Mapping) else {}


def _type_of(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "")
    if not kind and "enum" in schema:
        return "string"
    return kind if isinstance(kind, str) else ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def fields_from_schema(
    document: Mapping[str, Any], schema: Any, location: str
) -> tuple[list[FormField], bool]:
    """(fields, raw): one field per top-level property; raw when there are none to build."""
    schema = _resolve(document, schema)
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        # An object with no properties takes no input; anything else is typed as JSON.
        declared = _type_of(schema)
        return [], not (declared == "object" and schema.get("additionalProperties") is False)
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    out: list[FormField] = []
    for name, sub in properties.items():
        sub = _resolve(document, sub)
        listed = sub.get("enum")
        enum = listed if isinstance(listed, list) else ([sub["const"]] if "const" in sub else [])
        examples = sub.get("examples")
        out.append(
            FormField(
                name=str(name),
                location=location,  # type: ignore[arg-type]
                type=_type_of(sub),
                required=name in required,
                title=_text(sub.get("title")),
                description=_text(sub.get("description")),
                enum=tuple(enum),
                default=sub.get("default"),
                example=examples[0]
                if isinstance(examples, list) and examples
                else sub.get("example"),
            )
        )
    return out, False


def api_actions(document: Mapping[str, Any]) -> list[Action]:
    actions: list[Action] = []
    for path, method, op, params in openapi.operations(document, HTTP_METHODS):
        fields: list[FormField] = []
        for param in params:
            param = _resolve(document, param)
            where = param.get("in")
            if where not in ("path", "query") or not isinstance(param.get("name"), str):
                continue
            schema = _resolve(document, param.get("schema"))
            fields.append(
                FormField(
                    name=param["name"],
                    location=where,
                    type=_type_of(schema) or "string",
                    required=bool(param.get("required")) or where == "path",
                    description=_text(param.get("description")) or _text(schema.get("description")),
                    enum=tuple(schema.get("enum") or ()),
                    example=param.get("example", schema.get("example")),
                )
            )
        raw_body = has_body = False
        body = _resolve(document, op.get("requestBody"))
        content = body.get("content") if isinstance(body.get("content"), Mapping) else {}
        media = content.get("application/json") if isinstance(content, Mapping) else None
        if isinstance(media, Mapping):
            has_body = True
            body_fields, raw_body = fields_from_schema(document, media.get("schema"), "body")
            fields += body_fields
        actions.append(
            Action(
                kind="api",
                name=_text(op.get("operationId")) or f"{method} {path}",
                title=_text(op.get("summary")) or f"{method.upper()} {path}",
                description=_text(op.get("description")),
                method=method.upper(),
                path=str(path),
                fields=tuple(fields),
                has_body=has_body,
                raw_body=raw_body,
                needs_approval=op.get("x-poppy-approval") is True,
            )
        )
    return actions


def tool_actions(tools: list[Mapping[str, Any]]) -> list[Action]:
    actions: list[Action] = []
    for tool in tools:
        name = tool.get("name")
        if not isinstance(name, str):
            continue
        schema = tool.get("inputSchema") or tool.get("input_schema") or {}
        fields, raw = fields_from_schema(
            schema if isinstance(schema, Mapping) else {}, schema, "argument"
        )
        description = _text(tool.get("description"))
        actions.append(
            Action(
                kind="mcp",
                name=name,
                # MCP tools rarely have a title; the description's first line says more than the name again.
                title=_text(tool.get("title")) or description.strip().split("\n", 1)[0] or name,
                description=description,
                fields=tuple(fields),
                raw_body=raw and bool(schema),
                needs_approval="approval" in description.lower(),
            )
        )
    return actions


def convert(field: FormField, text: str | bool) -> Any:
    """A typed value from what was typed; raises FormError naming the field."""
    if isinstance(text, bool):
        return text
    kind = field.type
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            number = float(text)
            return int(number) if number.is_integer() and "." not in text else number
        if kind == "boolean":
            lowered = text.strip().lower()
            if lowered in ("true", "yes", "1"):
                return True
            if lowered in ("false", "no", "0"):
                return False
            raise ValueError(text)
        if kind in ("object", "array"):
            value = json.loads(text)
            if kind == "object" and not isinstance(value, dict):
                raise ValueError("not an object")
            if kind == "array" and not isinstance(value, list):
                raise ValueError("not an array")
            return value
    except (ValueError, json.JSONDecodeError):
        raise FormError(f"{field.name}: {text!r} is not a valid {kind}") from None
    return text


@dataclass
class BuiltRequest:
    path: str = ""  # api: path with parameters filled and query appended
    body: Any = None
    arguments: dict[str, Any] = field(default_factory=dict)


_PATH_PARAM = re.compile(r"\{([^{}]+)\}")


def build_request(
    action: Action, values: Mapping[str, str | bool], raw_json: str = ""
) -> BuiltRequest:
    """values: field.key -> what was typed ('' means left empty)."""
    typed: dict[str, dict[str, Any]] = {"path": {}, "query": {}, "body": {}, "argument": {}}
    for f in action.fields:
        value = values.get(f.key, "")
        if value == "" or value is None:
            if f.required:
                raise FormError(f"{f.name} is required")
            continue
        typed[f.location][f.name] = convert(f, value)
    result = BuiltRequest()
    if action.kind == "api":

        def fill(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in typed["path"]:
                raise FormError(f"{name} is required")
            return quote(str(typed["path"][name]), safe="")

        path = _PATH_PARAM.sub(fill, action.path)
        if typed["query"]:
            path += "?" + urlencode(
                {k: v if isinstance(v, str) else json.dumps(v) for k, v in typed["query"].items()}
            )
        result.path = path
        if action.raw_body:
            result.body = _raw(raw_json)
        elif action.has_body:
            result.body = typed["body"]
    else:
        if action.raw_body and raw_json.strip():
            raw = _raw(raw_json)
            if not isinstance(raw, dict):
                raise FormError("the arguments must be a JSON object")
            result.arguments = raw
        else:
            result.arguments = typed["argument"]
    return result


def _raw(text: str) -> Any:
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormError(f"the body is not valid JSON: {exc.msg} at line {exc.lineno}") from None
