"""What the Personal Agent asked for, per interface. Stored with each operation,
resent unchanged with the approval, and compared with the operation's terms."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

Interface = Literal["api", "mcp", "conversation"]


@dataclass(frozen=True)
class ApiRequest:
    method: str
    url: str
    body: Any = None  # parsed JSON, or None for no body
    interface: Interface = field(default="api", init=False)

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    @property
    def query(self) -> dict[str, str]:
        return dict(parse_qsl(urlsplit(self.url).query))

    def describe(self) -> str:
        return f"{self.method} {self.url}"


@dataclass(frozen=True)
class McpRequest:
    server_url: str
    tool: str
    arguments: dict[str, Any]
    interface: Interface = field(default="mcp", init=False)

    def describe(self) -> str:
        return f"MCP tool {self.tool}"


@dataclass(frozen=True)
class ConversationRequest:
    endpoint: str
    conversation_id: str | None
    message_id: str
    text: str
    interface: Interface = field(default="conversation", init=False)

    def describe(self) -> str:
        return "conversation message"


RequestDescription = ApiRequest | McpRequest | ConversationRequest


@dataclass(frozen=True)
class ApiAction:
    """The same API action: the same method (any case), URL and body (canonical JSON)."""

    method: str
    url: str
    body: str


@dataclass(frozen=True)
class McpAction:
    """The same MCP action: the same server, tool and arguments (canonical JSON)."""

    server_url: str
    tool: str
    arguments: str


@dataclass(frozen=True)
class ConversationAction:
    """The same conversation: in a conversation the operation is the conversation's (Ops 6,
    check 3), and what an operation there does is the Company Agent's reading of the whole
    conversation, not of one message's words ("Yes please, go ahead" is said in many)."""

    endpoint: str
    conversation_id: str


ActionKey = ApiAction | McpAction | ConversationAction


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def action_key(request: RequestDescription) -> ActionKey | None:
    """What makes two requests of one Company possibly ask for the same action (Ops 7), typed
    per interface: the same method, URL and body (API); the same MCP server, tool and arguments
    (MCP); the same conversation (a conversation, whatever the words). None when there is nothing
    to compare (a first message whose conversation the Company has not named yet). Keys of
    different interfaces are never equal: across them only the Company knows (Ops 3)."""
    if isinstance(request, ApiRequest):
        return ApiAction(request.method.upper(), request.url, _canonical(request.body))
    if isinstance(request, McpRequest):
        return McpAction(request.server_url, request.tool, _canonical(request.arguments))
    if not request.conversation_id:
        return None
    return ConversationAction(request.endpoint, request.conversation_id)


def request_to_json(request: RequestDescription) -> str:
    if isinstance(request, ApiRequest):
        data = {
            "interface": "api",
            "method": request.method,
            "url": request.url,
            "body": request.body,
        }
    elif isinstance(request, McpRequest):
        data = {
            "interface": "mcp",
            "server_url": request.server_url,
            "tool": request.tool,
            "arguments": request.arguments,
        }
    else:
        data = {
            "interface": "conversation",
            "endpoint": request.endpoint,
            "conversation_id": request.conversation_id,
            "message_id": request.message_id,
            "text": request.text,
        }
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def request_from_json(text: str) -> RequestDescription:
    data = json.loads(text)
    kind = data.get("interface")
    if kind == "api":
        return ApiRequest(method=data["method"], url=data["url"], body=data.get("body"))
    if kind == "mcp":
        return McpRequest(
            server_url=data["server_url"], tool=data["tool"], arguments=data.get("arguments") or {}
        )
    if kind == "conversation":
        return ConversationRequest(
            endpoint=data["endpoint"],
            conversation_id=data.get("conversation_id"),
            message_id=data["message_id"],
            text=data["text"],
        )
    raise ValueError(f"unknown request interface {kind!r}")
