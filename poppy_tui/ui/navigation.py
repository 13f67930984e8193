"""The app's global keys: the screens they show, in the order the navigation bar lists them, and
the key a person has for a binding after their keymap. app.py binds them; the screens' navigation
bar and the help screen list them. Here, so that the screens need not import the app (which
imports every screen)."""

from __future__ import annotations

from textual.binding import Binding, BindingType

# Actions that switch screens: never from a dialog or a screen where the person types.
NAVIGATION = {
    "show_inbox",
    "show_history",
    "show_companies",
    "show_agents",
    "compose",
    "talk",
    "help",
}
# The screens the global keys go to, in the order the navigation bar lists them:
# (mode, binding id, default key, label).
NAV_ITEMS = (
    ("inbox", "inbox", "i", "Inbox"),
    ("history", "history", "h", "History"),
    ("companies", "companies", "c", "Companies"),
    ("agents", "agents", "m", "Agents"),
    ("compose", "compose", "n", "New request"),
    ("talk", "talk", "t", "Talk"),
)

GLOBAL_BINDINGS: list[BindingType] = [
    # The navigation bar at the top lists these; the footer keeps its width for the screen's own keys.
    Binding("i", "show_inbox", "Inbox", id="inbox", show=False),
    Binding("h", "show_history", "History", id="history", show=False),
    Binding("c", "show_companies", "Companies", id="companies", show=False),
    Binding("m", "show_agents", "Agents", id="agents", show=False),  # the gate's (MCP) agents
    Binding("n", "compose", "New request", id="compose", show=False),
    Binding("t", "talk", "Talk", id="talk", show=False),
    Binding("question_mark,f1", "help", "Help", id="help"),
    Binding("q", "quit", "Quit", id="quit"),
]


def key_for(keymap: dict[str, str], binding_id: str, default: str) -> str:
    """The key the person has for a binding, after their keymap (binding id -> keys)."""
    keys = keymap.get(binding_id, default)
    return keys.split(",")[0].strip()
