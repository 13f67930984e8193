"""The gate's agents (docs/mcp.md): each one that has a token or has asked, when it last called a
tool and last asked, what it has waiting for the person, and what its MCP client says it is (a
claim). `r` revokes the selected agent's token, after a confirmation: a running `poppy-tui mcp
--http` refuses it from its next request and closes its sessions at once; its operations stay in
the queue. Every name and claim is neutralised (safety/who_asked.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from poppy_tui.safety.who_asked import agent_name, client_claim
from poppy_tui.ui.format import local_time, relative
from poppy_tui.ui.safe import cell
from poppy_tui.ui.screens.base import SCREENS_CSS, PoppyScreen
from poppy_tui.ui.widgets.countdown import app_now
from poppy_tui.ui.widgets.footer import PoppyFooter
from poppy_tui.ui.widgets.tables import remaining_width, set_columns

# Narrow: who, when it last asked, what waits; wide: all of it.
COLUMNS = (
    ("name", "Agent", 14),
    ("token", "Token", 8),
    ("last_asked_ago", "Last asked", 14),
    ("waiting", "Waiting", 7),
    ("client", "Its client says", 0),
)
WIDE_FROM = 150
WIDE_COLUMNS = (
    ("name", "Agent", 24),
    ("token", "Token", 8),
    ("created", "Created", 23),
    ("last_used", "Last used", 23),
    ("last_asked", "Last asked", 23),
    ("waiting", "Waiting", 7),
    ("client", "Its client says", 0),
)
REFRESH_SECONDS = 2.0


@dataclass(frozen=True)
class AgentLine:
    name: str
    has_token: bool
    see_all: bool
    created_at: str | None
    last_used_at: str | None
    last_asked_at: str | None
    waiting: int
    client: Any


def agent_lines(data_dir: Any, store: Any) -> tuple[list[AgentLine], str | None]:
    """Every agent with a token, then every one the store saw without one; and the one line to
    show instead when the agents file can't be read."""
    from poppy_tui.agent.gate.registry import RegistryError
    from poppy_tui.agent.gate.roster import token_holders

    problem = None
    try:
        holders = token_holders(data_dir)
    except RegistryError as exc:
        holders, problem = [], str(exc)
    activity = store.gate_activity()
    lines = []
    for holder in holders:
        seen = activity.get(holder.name)
        lines.append(
            AgentLine(
                holder.name,
                True,
                holder.see_all,
                holder.created_at,
                seen.last_used_at if seen else None,
                seen.last_asked_at if seen else None,
                seen.waiting if seen else 0,
                seen.client if seen else None,
            )
        )
    named = {h.name for h in holders}
    for name in sorted(set(activity) - named):
        seen = activity[name]
        lines.append(
            AgentLine(
                name,
                False,
                False,
                None,
                seen.last_used_at,
                seen.last_asked_at,
                seen.waiting,
                seen.client,
            )
        )
    return lines, problem


class AgentsScreen(PoppyScreen):
    TITLE_TEXT = "Agents"
    NAV_MODE = "agents"
    AUTO_FOCUS = "#agents-table"
    BINDINGS = [Binding("r", "revoke", "Revoke its token", id="revoke_agent")]

    def __init__(self) -> None:
        super().__init__(id="agents")
        self.lines: list[AgentLine] = []

    def compose(self) -> ComposeResult:
        yield from self.title_bar()
        yield DataTable(id="agents-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="agents-help")
        yield PoppyFooter()

    def on_mount(self) -> None:
        self.set_interval(REFRESH_SECONDS, self.refresh_data)

    @property
    def data_dir(self) -> Any:
        """Where the gate's token files are: the data folder, the store's own."""
        from pathlib import Path

        paths = getattr(self.agent, "paths", None)
        return paths.data_dir if paths is not None else Path(self.store.path).parent

    def refresh_data(self) -> None:
        self.lines, problem = agent_lines(self.data_dir, self.store)
        table = self.query_one("#agents-table", DataTable)
        cursor = table.cursor_row
        width = self.app.size.width
        columns = WIDE_COLUMNS if width >= WIDE_FROM else COLUMNS
        rest = remaining_width(width, (w for k, _, w in columns if w), minimum=12, chrome=4)
        set_columns(table, [(k, label, w or rest) for k, label, w in columns])
        table.clear()
        now = app_now(self)
        for line in self.lines:
            values = {
                "name": agent_name(line.name),
                "token": ("sees all" if line.see_all else "yes") if line.has_token else "none",
                "last_asked_ago": relative(line.last_asked_at, now) or "never",
                "created": _token_time(line.created_at),
                "last_used": local_time(line.last_used_at) if line.last_used_at else "never",
                "last_asked": local_time(line.last_asked_at) if line.last_asked_at else "never",
                "waiting": str(line.waiting),
                "client": (client_claim(line.client) or "—").removeprefix("its client says "),
            }
            table.add_row(*(cell(values[k], w or rest) for k, _, w in columns), key=line.name)
        if self.lines:
            table.move_cursor(row=min(cursor, len(self.lines) - 1))
        help_text = (
            "r: revoke the selected agent's token (refused at once; its operations stay)\n"
            "poppy-tui mcp token --agent NAME gives an agent a token of its own."
            if self.lines
            else "No agents yet. poppy-tui mcp token --agent NAME gives one a name and a token\n"
            "for poppy-tui mcp --http (docs/mcp.md)."
        )
        if problem:
            help_text = f"{problem}\n{help_text}"
        self.query_one("#agents-help", Static).update(Content(help_text))

    def selected(self) -> AgentLine | None:
        table = self.query_one("#agents-table", DataTable)
        if not self.lines or table.cursor_row >= len(self.lines):
            return None
        return self.lines[table.cursor_row]

    def action_revoke(self) -> None:
        line = self.selected()
        if line is None:
            return
        if not line.has_token:
            self.notify(
                f"{agent_name(line.name)} has no token to revoke (a stdio gate's name, or revoked).",
                markup=False,
            )
            return

        def decided(yes: bool | None) -> None:
            if yes:
                self.revoke(line.name)

        self.app.push_screen(RevokeAgentScreen(line), decided)

    def revoke(self, name: str) -> None:
        from poppy_tui.agent.gate.registry import RegistryError
        from poppy_tui.agent.gate.roster import revoke

        try:
            ended = revoke(self.data_dir, name)
        except RegistryError as exc:
            self.notify(str(exc), severity="error", markup=False, timeout=10)
            return
        self.notify(
            f"Revoked {agent_name(name)}: its token is refused from now on and its sessions close."
            if ended
            else f"{agent_name(name)} had no token any more.",
            markup=False,
        )
        self.refresh_data()


def _token_time(text: str | None) -> str:
    """When a token was made (RFC 3339, as the agents file keeps it), as poppy writes a moment."""
    from datetime import datetime

    if not text:
        return "—"
    try:
        return local_time(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        return "—"


class RevokeAgentScreen(ModalScreen[bool]):
    """Revoking asks once: the agent, what it has waiting, and what revoking does. Only `y` says yes."""

    CSS_PATH = SCREENS_CSS
    AUTO_FOCUS = None
    BINDINGS = [
        Binding("y", "confirm", "Yes, revoke", id="confirm_revoke"),
        Binding("escape,n", "cancel", "Cancel", id="cancel_revoke"),
    ]

    def __init__(self, line: AgentLine) -> None:
        super().__init__(id="revoke-agent")
        self.line = line

    def compose(self) -> ComposeResult:
        waiting = self.line.waiting
        with Vertical(id="confirm-dialog"):
            yield Static(Content("Revoke this agent's token?"), id="confirm-title")
            yield Static(
                Content.assemble(("Agent  ", "dim"), (agent_name(self.line.name), "bold")),
                id="revoke-name",
            )
            yield Static(
                Content(
                    "Its next request is refused and its open sessions and waiting calls close at "
                    "once. "
                    + (
                        f"Its {waiting} operation{'s' if waiting != 1 else ''} waiting for you stay "
                        "in the queue."
                        if waiting
                        else "Nothing of it waits for you."
                    )
                ),
                id="revoke-effect",
            )
            yield Static(Content("y: revoke   Esc or n: cancel"), id="confirm-help")
        yield Footer()

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
