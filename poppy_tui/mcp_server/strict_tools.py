"""Tool input schemas that say `additionalProperties: false`, and a server that means it.

Clients that require strict schemas (the OpenAI Agents SDK among them) can then use every tool;
and an argument no schema names (`aprove: true`, a misspelt `wait_seconds`) is refused with one
line naming the arguments the tool takes, instead of being dropped in silence. Only MCPServer's
public list_tools and call_tool are extended."""

from __future__ import annotations

import copy
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


class StrictToolsServer(MCPServer):
    async def list_tools(self) -> list[Any]:
        tools = await super().list_tools()
        for tool in tools:
            schema = copy.deepcopy(tool.input_schema)
            schema["additionalProperties"] = False
            tool.input_schema = schema
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        schema = next((t.input_schema for t in await super().list_tools() if t.name == name), None)
        if schema is not None:
            known = set(schema.get("properties", {}))
            unknown = sorted(set(arguments) - known)
            if unknown:
                raise ToolError(
                    f"{name} takes no argument {', '.join(repr(u[:60]) for u in unknown[:5])}; "
                    f"it takes {', '.join(sorted(known)) or 'none'}"
                )
        return await super().call_tool(name, arguments, context)
