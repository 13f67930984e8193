"""`poppy-tui mcp`: poppy-tui as the approval gate for AI agents, over MCP (stdio, or streamable HTTP with --http).

An MCP client (an LLM agent) adds poppy-tui as one server and makes its requests to Companies
through it. When a Company answers with an operation, the tool call waits for the person at the
TUI (progress notifications meanwhile) and then returns the Company's final response, or says how
it ended. Nothing here approves or declines: no tool, argument or text can.

It uses only `agent/` and `safety/` (never `cli/` or `ui/`), and shares the store and the queue
with the TUI and the CLI. Importing it costs the MCP SDK, so only the `mcp` command loads it.
"""
