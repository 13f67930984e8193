"""The approval gate's credentials (`poppy-tui mcp`): the agents the person named, each with a
bearer token of its own (registry.py), the one token from before names (default_token.py), and
what a running server accepts (credentials.py). Standard library only, so `poppy-tui mcp token`
and `poppy-tui mcp agents` stay short commands; the TUI's Agents screen and the CLI use the same
files as the server."""
