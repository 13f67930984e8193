"""Who asked for an operation, in the person's words, neutralised: an agent's name comes from a
token's file or a stdio gate's command line, and what its MCP client says it is (clientInfo) is
the client's own claim, so both are text that doesn't come from poppy-tui and are shown as such
(sanitize_line: escapes and invisibles made visible, cut visibly). The inbox row, the review's
header, the confirmation, history, `show`, `show --json`, `pending --json` and the desktop
notification all say it through here, so they say it the same way.

Duck-typed (`origin`, `agent`, `client`, `first_request`: agent/store/requesters.AskedBy), since
safety sits below the store."""

from __future__ import annotations

from typing import Any
from collections.abc import Iterable, Sequence

from poppy_tui.safety.sanitize import sanitize_line

NAME_CHARS = 40
CLIENT_CHARS = 60
# The interfaces a request comes through, as the person knows them ('mcp' is the gate).
ORIGIN_WORDS = {
    "cli": "the CLI",
    "tui": "you, in poppy-tui",
    "demo": "the demo",
    "refresh": "a read of the conversation",
}


def agent_name(name: object) -> str:
    return sanitize_line("" if name is None else str(name), NAME_CHARS).text


def requester_text(origin: object, agent: object = None) -> str:
    """`agent «laptop»`, `the CLI`, `you, in poppy-tui`: one short phrase."""
    if agent is not None:
        return f"agent «{agent_name(agent)}»"
    if origin == "mcp":
        return "an agent (no name recorded)"
    return ORIGIN_WORDS.get(str(origin), sanitize_line(str(origin), 20).text)


def client_claim(client: Any) -> str | None:
    """What the agent's MCP client says it is, marked as its claim: `its client says «X 1.2»`."""
    if not isinstance(client, dict):
        return None
    parts = [str(client[key]) for key in ("name", "version") if isinstance(client.get(key), str)]
    if not parts:
        return None
    return f"its client says «{sanitize_line(' '.join(parts), CLIENT_CHARS).text}»"


def asked_by_text(asked: Any, *, claim: bool = True, first: bool = True) -> str:
    """One who asked, with the client's claim and whether it is the agent's first request."""
    text = requester_text(asked.origin, asked.agent)
    notes = []
    if claim and (said := client_claim(asked.client)):
        notes.append(said)
    if first and asked.first_request:
        notes.append("NEW: its first request")
    return text + (f" ({'; '.join(notes)})" if notes else "")


def asked_by_line(asked: Sequence[Any], *, claim: bool = True) -> str:
    """Everyone who asked, first asker first: `agent «laptop» (…); then the CLI`."""
    if not asked:
        return "not recorded"
    return "; then ".join(asked_by_text(a, claim=claim) for a in asked)


def asked_by_json(asked: Iterable[Any]) -> list[dict[str, Any]]:
    """As `show --json` gives it: the stored values (JSON output escapes them; docs/cli.md)."""
    return [
        {
            "origin": a.origin,
            "agent": a.agent,
            "client": a.client,
            "first_request": a.first_request,
            "at": a.at,
        }
        for a in asked
    ]


def is_new_agent(asked: Iterable[Any]) -> bool:
    """Whether any agent that asked for it had never asked before: the review marks it."""
    return any(a.agent is not None and a.first_request for a in asked)


# In a table's narrow column: the agent's name alone, or the interface in one word.
SHORT_WORDS = {"cli": "CLI", "tui": "you", "demo": "demo", "refresh": "—"}


def short_requester(origin: object, agent: object = None) -> str:
    """`laptop`, `CLI`, `you`: who asked, in a table cell (which cuts it visibly)."""
    if agent is not None:
        return agent_name(agent)
    if origin == "mcp":
        return "agent"
    return SHORT_WORDS.get(str(origin), "—")
