"""Telling the person, while the TUI is open, that something needs them or has ended: a new
operation, a new revision of one, or a send that settled (performed, not performed, outcome
unknown). Three channels, each on or off in config.toml's [notifications]: a toast naming the
Company and the amount, the terminal bell, and a desktop notification written to the terminal
as an OSC 9 / OSC 777 / OSC 99 escape.

Every word that comes from a Company (its name, the amount) is sanitised first, and the escape's
payload is then stripped of anything that could end or extend the sequence (ESC, BEL, C1
controls, and the field separator), so no escape sequence from a Company reaches the terminal.
"""

from __future__ import annotations

import logging
import os
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from collections.abc import Callable, Mapping

from poppy_tui.agent.store import OperationRow, Status, Store
from poppy_tui.safety.sanitize import sanitize_line

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

Kind = Literal["new_operation", "new_revision", "settled"]
SEND_RESULTS = frozenset({Status.PERFORMED, Status.NOT_PERFORMED, Status.OUTCOME_UNKNOWN})
SENT_FROM = frozenset({Status.APPROVED, Status.SENDING})
# Rows read per poll, most recently changed first; a poll sees what changed since the last one.
WATCH_LIMIT = 500
NAME_CHARS = 60
AMOUNT_CHARS = 40
PAYLOAD_CHARS = 240
TITLE = "poppy-tui"


@dataclass(frozen=True)
class Event:
    kind: Kind
    operation_row: int
    company: str  # sanitised
    amount: str | None  # sanitised
    status: Status

    @property
    def message(self) -> str:
        money = f" {self.amount}" if self.amount else ""
        if self.kind == "new_operation":
            return f"{self.company} asks for your approval{money} (operation {self.operation_row})"
        if self.kind == "new_revision":
            return f"{self.company} changed the terms{money}: review again (operation {self.operation_row})"
        said = {
            Status.PERFORMED: "performed",
            Status.NOT_PERFORMED: "not performed",
            Status.OUTCOME_UNKNOWN: "OUTCOME UNKNOWN: check with the Company",
        }.get(self.status, self.status.value)
        return f"{self.company}: {said}{money} (operation {self.operation_row})"

    @property
    def severity(self) -> SeverityLevel:
        if self.kind == "settled" and self.status != Status.PERFORMED:
            return "warning" if self.status == Status.NOT_PERFORMED else "error"
        return "information"


def _amount(store: Store, row: int) -> str | None:
    from poppy_tui.safety.discrepancies import key_amount

    try:
        amount = key_amount(store.get_operation(row).current.as_operation())
    except Exception:  # logged: a notification without an amount is still a notification
        log.warning("operation %s's amount can't be read for its notification", row, exc_info=True)
        return None
    return sanitize_line(amount, AMOUNT_CHARS).text if amount else None


class OperationWatcher:
    """What changed in the store since the last look. The first look only takes note."""

    def __init__(self, store: Store, since: str | None = None) -> None:
        """`since` (a store stamp): the first look reports what changed after it, instead of
        only taking note (the TUI starts watching after its first frame, and something may
        have arrived while that frame was drawn)."""
        self.store = store
        self._seen: dict[int, tuple[Status, str, int]] | None = None
        self._started = ""
        self._since = since

    def changes(self) -> list[Event]:
        rows = self.store.list_operations(limit=WATCH_LIMIT)
        if self._seen is None and self._since is not None:
            self._seen, self._started = {}, self._since
        if self._seen is None:
            self._seen = {r.id: (r.status, r.revision, r.revision_count) for r in rows}
            self._started = max((r.updated_at for r in rows), default="")
            return []
        events = []
        for row in reversed(rows):  # oldest change first
            kind = self._kind(row, self._seen.get(row.id))
            self._seen[row.id] = (row.status, row.revision, row.revision_count)
            if kind is not None:
                events.append(
                    Event(
                        kind,
                        row.id,
                        sanitize_line(row.company_name, NAME_CHARS).text,
                        _amount(self.store, row.id),
                        row.status,
                    )
                )
        return events

    def _kind(self, row: OperationRow, before: tuple[Status, str, int] | None) -> Kind | None:
        if before is None:
            if row.updated_at <= self._started:
                return None  # old, just scrolled into the window
            if row.revision_count == 1 and row.status.is_open:
                return "new_operation"
            if row.status.is_open:
                return "new_revision"
            return "settled" if row.status in SEND_RESULTS and row.approved_revision else None
        status, revision, _ = before
        if revision != row.revision and row.status.is_open:
            return "new_revision"
        if row.status in SEND_RESULTS and status != row.status and status not in SEND_RESULTS:
            return "settled"
        return None


def desktop_protocol(setting: str, environ: Mapping[str, str] | None = None) -> str:
    """The escape to use: the configured one, or for "auto" the one this terminal is known to show."""
    if setting != "auto":
        return setting
    env = os.environ if environ is None else environ
    if env.get("TMUX") or env.get("STY"):
        return "off"  # a multiplexer would need its own passthrough wrapping
    term = env.get("TERM", "")
    program = env.get("TERM_PROGRAM", "")
    if env.get("KITTY_WINDOW_ID") or "kitty" in term:
        return "osc99"
    if program in ("iTerm.app", "WezTerm", "ghostty") or env.get("WT_SESSION"):
        return "osc9"
    if env.get("VTE_VERSION") or term.startswith("foot") or "rxvt" in term:
        return "osc777"
    return "off"


def _payload(text: str) -> str:
    """Sanitised text, then nothing that can end an OSC string or split its fields."""
    shown = sanitize_line(text, PAYLOAD_CHARS).text
    kept = []
    for ch in shown:
        if ch in ";\x1b\x07\x9c\x9d" or unicodedata.category(ch) in (
            "Cc",
            "Cf",
            "Zl",
            "Zp",
            "Cs",
            "Co",
        ):
            kept.append("," if ch == ";" else "?")
        else:
            kept.append(ch)
    return "".join(kept)


def desktop_sequence(protocol: str, title: str, body: str) -> str:
    title, body = _payload(title), _payload(body)
    if protocol == "osc9":
        return f"\x1b]9;{title}: {body}\x07"
    if protocol == "osc777":
        return f"\x1b]777;notify;{title};{body}\x07"
    if protocol == "osc99":
        return f"\x1b]99;i=poppy:d=0;{title}\x1b\\\x1b]99;i=poppy:d=1:p=body;{body}\x1b\\"
    return ""


class Notifier:
    """Sends each event to the channels the settings turn on."""

    def __init__(
        self,
        settings: Any,
        toast: Callable[[str, SeverityLevel], None],
        bell: Callable[[], None],
        write: Callable[[str], None],
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        self._toast = toast
        self._bell = bell
        self._write = write
        self.protocol = desktop_protocol(getattr(settings, "desktop", "off"), environ)

    def announce(self, events: list[Event], on_screen: frozenset[int] = frozenset()) -> None:
        """Toast, desktop notification and bell for `events`; no toast for a send that settled
        while its own review is on screen (`on_screen`): the banner there says it already."""
        if not events:
            return
        for event in events:
            said_on_screen = event.kind == "settled" and event.operation_row in on_screen
            if getattr(self.settings, "toast", True) and not said_on_screen:
                self._toast(event.message, event.severity)
            if self.protocol != "off":
                self._write(desktop_sequence(self.protocol, TITLE, event.message))
        if getattr(self.settings, "bell", True):
            self._bell()  # once per poll, however many arrived together
