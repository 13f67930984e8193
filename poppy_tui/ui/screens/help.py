"""Every key, per screen, with the binding id to remap it in config.toml [keybindings]."""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from poppy_tui.ui.screens.base import SCREENS_CSS


def binding_groups() -> list[tuple[str, list[Binding], list[tuple[str, str]]]]:
    """(screen, bindings, extra (keys, what) rows for keys widgets handle themselves)."""
    from poppy_tui.ui.navigation import GLOBAL_BINDINGS
    from poppy_tui.ui.screens.agents import AgentsScreen, RevokeAgentScreen
    from poppy_tui.ui.screens.companies import CompaniesScreen
    from poppy_tui.ui.screens.composer import ComposerScreen
    from poppy_tui.ui.screens.confirm_approve import (
        ConfirmApproveScreen,
        ConfirmDeclineScreen,
        ResolveOutcomeScreen,
    )
    from poppy_tui.ui.screens.conversation import ConversationScreen, OperationCard
    from poppy_tui.ui.screens.devices import DevicesScreen
    from poppy_tui.ui.screens.history import HistoryScreen
    from poppy_tui.ui.screens.history_detail import HistoryDetailScreen
    from poppy_tui.ui.screens.quit_dialog import QuitScreen
    from poppy_tui.ui.screens.review import ReviewScreen
    from poppy_tui.ui.screens.signin import SignInScreen

    from poppy_tui.ui.screens.inbox import InboxScreen
    from poppy_tui.ui.typed_keys import TYPED_FOCUS_BINDINGS

    def bindings(items: Iterable[Binding | tuple[str, ...]]) -> list[Binding]:
        # Tab and Enter moving focus as typed (ui/typed_keys.py) are what those keys always do.
        return [b for b in items if isinstance(b, Binding) and b not in TYPED_FOCUS_BINDINGS]

    return [
        (
            "Everywhere",
            bindings(GLOBAL_BINDINGS),
            [("ctrl+p", "command palette: theme, keys, quit (never decisions)")],
        ),
        (
            "Inbox",
            bindings(InboxScreen.BINDINGS),  # the notice's keys (walk K15: they were missing)
            [("up/down", "move"), ("enter", "review the operation"), ("tab", "next table")],
        ),
        (
            "Review",
            bindings(ReviewScreen.BINDINGS),
            [("up/down/pgup/pgdn", "scroll the summary and terms")],
        ),
        (
            "Confirm approval",
            bindings(ConfirmApproveScreen.BINDINGS),
            [("enter", "does nothing here, on purpose")],
        ),
        ("Confirm decline", bindings(ConfirmDeclineScreen.BINDINGS), []),
        ("Outcome unknown", bindings(ResolveOutcomeScreen.BINDINGS), []),
        ("History", bindings(HistoryScreen.BINDINGS), [("enter", "show the full record")]),
        ("Operation record", bindings(HistoryDetailScreen.BINDINGS), []),
        (
            "Companies",
            bindings(CompaniesScreen.BINDINGS),
            [("enter", "make a request to the Company")],
        ),
        ("Devices (poppy-tui web)", bindings(DevicesScreen.BINDINGS), []),
        ("Agents", bindings(AgentsScreen.BINDINGS), []),
        ("Revoke agent", bindings(RevokeAgentScreen.BINDINGS), []),
        (
            "Sign in",
            bindings(SignInScreen.BINDINGS),
            [("enter (in a field)", "next field, or sign in on the last")],
        ),
        (
            "New request",
            bindings(ComposerScreen.BINDINGS),
            [("enter", "pick the highlighted operation or tool")],
        ),
        (
            "Talk",
            bindings(ConversationScreen.BINDINGS) + bindings(OperationCard.BINDINGS),
            [("enter (in the box)", "send the message")],
        ),
        ("Quit with approvals not sent", bindings(QuitScreen.BINDINGS), []),
    ]


# The keys column fits the longest key text (up to this), so "up/down/pgup/pgdn" stays on one line.
KEYS_WIDTH_MAX = 20


class HelpScreen(ModalScreen[None]):
    CSS_PATH = SCREENS_CSS
    BINDINGS = [
        Binding("escape,question_mark,f1", "close", "Close", id="close_help"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog", can_focus=True):
            yield Static(Content("Keys"), classes="section-title")
            yield Static(
                Content(
                    # A sentence a line, each well under the dialog's 74 columns at 80: run
                    # together, the example broke between 'approve =' and '"A"'.
                    'Remap keys in config.toml by id: approve = "A" under [keybindings].\n'
                    "Approve always takes a second step (y); Enter never approves."
                ),
                classes="field-help",
            )
            groups = [
                (title, self._rows(bindings, extra)) for title, bindings, extra in binding_groups()
            ]
            every_row = [row for _, rows in groups for row in rows]
            # One width per column for every section, so keys and ids line up down the whole help.
            keys_width = min(KEYS_WIDTH_MAX, max(len(keys) for keys, _, _ in every_row))
            id_width = max(len(binding_id) for _, _, binding_id in every_row)
            for title, rows in groups:
                yield Static(Content(title), classes="section-title")
                yield Static(self._table(rows, keys_width, id_width), classes="help-keys")
        yield Footer()

    def _keys(self, binding: Binding) -> str:
        overrides = getattr(self.app, "keymap_overrides", {})
        keys = overrides.get(binding.id, binding.key) if binding.id else binding.key
        return ", ".join(self.app.get_key_display(Binding(k.strip(), "")) for k in keys.split(","))

    def _rows(
        self, bindings: list[Binding], extra: list[tuple[str, str]]
    ) -> list[tuple[str, str, str]]:
        rows = [(self._keys(b), b.description, b.id or "") for b in bindings]
        return rows + [(keys, what, "") for keys, what in extra]

    @staticmethod
    def _table(rows: list[tuple[str, str, str]], keys_width: int, id_width: int) -> Table:
        # A table that wraps only the description: at 80 columns every word stays inside the dialog.
        table = Table(box=None, show_header=False, expand=True, pad_edge=False, padding=(0, 1))
        table.add_column(width=keys_width, style="bold", overflow="fold")
        table.add_column(ratio=1, overflow="fold")
        table.add_column(width=id_width, style="dim", no_wrap=True)
        for keys, what, binding_id in rows:
            table.add_row(Text(keys), Text(what), Text(binding_id))
        return table

    def action_close(self) -> None:
        self.dismiss(None)
