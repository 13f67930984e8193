"""What the Personal Agent asked for: the request that the approval will be resent with."""

from __future__ import annotations

import json

from textual.content import Content
from textual.widgets import Static

from poppy_tui.protocol.requests import (
    ApiRequest,
    ConversationRequest,
    McpRequest,
    RequestDescription,
)
from poppy_tui.ui.safe import safe_content


def request_content(request: RequestDescription) -> Content:
    # URLs and arguments can hold Company-chosen parts (paths from its OpenAPI), so all of it is sanitised.
    def pretty(value: object) -> Content:
        return safe_content(json.dumps(value, indent=2, ensure_ascii=False, default=str))

    label = lambda text: Content.styled(text, "bold")  # noqa: E731
    if isinstance(request, ApiRequest):
        parts: list[Content | str] = [
            label("API request  "),
            safe_content(f"{request.method} {request.url}"),
        ]
        if request.body is not None:
            parts += ["\n", label("Body\n"), pretty(request.body)]
        else:
            parts += ["\n", Content.styled("(no body)", "dim")]
        return Content.assemble(*parts)
    if isinstance(request, McpRequest):
        return Content.assemble(
            label("MCP tool call  "),
            safe_content(request.tool),
            Content.styled("  on ", "dim"),
            safe_content(request.server_url),
            "\n",
            label("Arguments\n"),
            pretty(request.arguments),
        )
    if isinstance(request, ConversationRequest):
        return Content.assemble(
            label("Conversation message  "),
            Content.styled("to ", "dim"),
            safe_content(request.endpoint),
            "\n",
            safe_content(request.text),
        )
    return safe_content(repr(request))


class RequestView(Static):
    DEFAULT_CLASSES = "request-view"

    def __init__(self, request: RequestDescription | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        if request is not None:
            self.update(request_content(request))

    def show_request(self, request: RequestDescription) -> None:
        self.update(request_content(request))
