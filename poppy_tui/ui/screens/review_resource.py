"""The review's "Now" section: the resource an operation changes, as the Company's API says it is
(agent/resource_read.py), set apart under the terms and titled as not part of what the person
approves, checked against them (promise-like text flagged), read again on demand and just before
the confirmation (docs/tui.md, "Before you approve"); once the decision is carried out, titled
"Before the decision" and never read again. A part of ReviewScreen, kept apart from the
decisions."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from poppy_tui.agent.store.records import OperationRecord, Status
from poppy_tui.ui.safe import plain_line
from poppy_tui.ui.widgets.countdown import app_now
from poppy_tui.ui.widgets.resource_view import ResourceView, resource_title
from poppy_tui.ui.widgets.summary_view import SummaryView

if TYPE_CHECKING:
    from poppy_tui.ui.checks import Checked

log = logging.getLogger(__name__)

# Before the decision is carried out: waiting, withdrawn, or approved within the grace period.
BEFORE_SENDING = (Status.PENDING, Status.WITHDRAWN, Status.APPROVED)
# Below this many lines (80x24) the resource as read now folds to its title line.
FOLD_BELOW_LINES = 32
# A read of the same revision younger than this is shown as is when the review opens.
FRESH_READ_SECONDS = 30.0
# Before the confirmation: a read younger than this is seconds old already.
RECENT_READ_SECONDS = 3.0


class ResourceSection(Screen):
    """A base of ReviewScreen, which provides what is declared below."""

    if TYPE_CHECKING:
        record: OperationRecord | None
        checked: Checked | None
        shown_revision_id: int | None
        resource_read: Any
        opened_read: Any
        resource_findings: tuple[Any, ...]
        _resource_named: frozenset[str]
        _resource_flagged: frozenset[str]
        _resource_folded: bool | None
        _reading: bool
        agent: Any
        store: Any
        poppy: Any

        async def _show_findings(self) -> None: ...
        def _approve_blocked(self) -> tuple[str, bool] | None: ...
        def _say_why_not_approved(self, blocked: tuple[str, bool]) -> None: ...
        def _open_confirm(self, resource_note: tuple[Content, bool] | None) -> None: ...
        def arm(self) -> None: ...

    def _can_read(self) -> bool:
        """Only before the decision is carried out, and only with an agent that reads."""
        return (
            self.record is not None
            and self.record.status in BEFORE_SENDING
            and callable(getattr(self.agent, "read_resource", None))
        )

    def _resource_is_folded(self) -> bool:
        if self._resource_folded is not None:
            return self._resource_folded
        return self.app.size.height < FOLD_BELOW_LINES

    async def _begin_resource(self, record: OperationRecord) -> None:
        """Show what was last read, and read it again unless that read is of these terms and fresh."""
        reads = getattr(self.store, "resource_read", None)
        stored = reads(record.id) if reads is not None else None
        fresh = (
            stored is not None
            and stored.revision_id == record.current.id
            and (app_now(self) - stored.read_at).total_seconds() < FRESH_READ_SECONDS
        )
        if fresh:
            self.opened_read = stored
        await self._show_resource(stored)
        if self._can_read() and not fresh:
            self._start_read()

    def _start_read(self, deadline: float | None = None) -> None:
        if self.record is None:
            return
        self._reading = True
        self._show_resource_title()
        self.run_worker(
            self._read_now(self.record.id, deadline), group="resource-read", exclusive=True
        )

    async def _read_now(
        self, operation_row: int, deadline: float | None = None, rearm: bool = True
    ) -> Any:
        try:
            read = await self.agent.read_resource(operation_row, deadline)
        except Exception as exc:  # noqa: BLE001 - the store refused (gone, busy): the review stays up
            log.warning("reading the resource of operation %s failed: %s", operation_row, exc)
            read = None
        finally:
            self._reading = False
        if (
            read is None
        ):  # decided meanwhile (or the read failed inside poppy): show what was read before
            read = self.store.resource_read(operation_row)
        if self.record is None or self.record.id != operation_row:
            return read
        if self.opened_read is None and read is not None and read.ok:
            self.opened_read = read
        await self._show_resource(read, rearm)
        return read

    def _show_resource_title(self) -> None:
        """Its two lines: what the section is and is not, then where and when it was read and
        the keys that work now (`g` only while the decision is still to be carried out: once it
        is, the head says "Before the decision" and nothing is read again)."""
        title = self.query_one("#resource-title", Static)
        settled = self.record is not None and self.record.status not in BEFORE_SENDING
        head, detail = resource_title(self.resource_read, self._reading, settled)
        keys = []
        if self.resource_read is not None and self.resource_read.ok:
            shows = "shows" if self._resource_is_folded() else "hides"
            keys.append(f"{self.poppy.key_for('toggle_resource', 'v')} {shows} it")
        if self._can_read() and not self._reading:
            again = "reads it again" if self.resource_read is not None else "reads it"
            keys.append(f"{self.poppy.key_for('read_resource', 'g')} {again}")
        shown = (head, detail + (" — " + ", ".join(keys) if keys else ""))
        if shown != getattr(self, "_resource_title_shown", None):
            self._resource_title_shown = shown
            title.update(Content.assemble(shown[0], "\n", (shown[1], "dim")))

    def _follow_status(self) -> None:
        """The status moved (sent, performed, settled): the title follows, and `g` with it."""
        if self.query("#resource-title"):
            self._show_resource_title()

    async def _show_resource(self, read: Any, rearm: bool = False) -> None:
        """`rearm`: a danger this read turned up that wasn't there dims approve again for the
        arming delay, so it is read before `a` works (not before the confirmation, which says it)."""
        from poppy_tui.safety.resource_checks import source_label
        from poppy_tui.safety.resource_checks import compare_resource

        self.resource_read = read
        record, checked = self.record, self.checked
        findings: tuple[Any, ...] = ()
        named: frozenset[str] = frozenset()
        flagged: frozenset[str] = frozenset()
        # Compared only while the decision is still to be carried out: once performed, the
        # resource shows the change itself.
        if (
            read is not None
            and read.ok
            and record is not None
            and record.status in BEFORE_SENDING
            and checked is not None
            and checked.operation is not None
        ):
            comparison = compare_resource(
                checked.operation.terms, read.body, source_label(read.source)
            )
            findings, named = comparison.findings, comparison.named
            flagged = comparison.flagged
        elif read is not None and read.ok:
            # Settled: not compared any more, but promise-like text stays flagged.
            flagged = compare_resource(None, read.body, source_label(read.source)).flagged
        changed = findings != self.resource_findings
        new_danger = any(
            f.severity == "danger" and f not in self.resource_findings for f in findings
        )
        self.resource_findings, self._resource_named = findings, named
        self._resource_flagged = flagged
        shown = read is not None or self._can_read()
        self.query_one("#resource-title").display = shown
        view = self.query_one("#resource", ResourceView)
        view.display = shown
        view.show_read(
            read,
            named,
            folded=self._resource_is_folded(),
            fold_key=self.poppy.key_for("toggle_resource", "v"),
            flagged=self._resource_flagged,
        )
        self._show_resource_title()
        if changed:
            await self._show_findings()
        if rearm and new_danger:
            self.arm()
        self.refresh_bindings()

    def action_toggle_resource(self) -> None:
        self._resource_folded = not self._resource_is_folded()
        view = self.query_one("#resource", ResourceView)
        view.show_read(
            self.resource_read,
            self._resource_named,
            folded=self._resource_folded,
            fold_key=self.poppy.key_for("toggle_resource", "v"),
            flagged=self._resource_flagged,
        )
        self._show_resource_title()
        if not self._resource_folded:
            self.query_one("#summary-view", SummaryView).scroll_to_widget(
                self.query_one("#resource-title")
            )

    def action_read_resource(self) -> None:
        if self._can_read():
            self._start_read()

    def _confirm_note(self) -> tuple[Content, bool] | None:
        """What the confirmation says about the resource: (line, changed since the review opened).
        It names the read as the review's section does (where from, and when: "Now (read from GET
        /orders/o_1 at 14:02:11)"), with a verdict: as the review shows it, unchanged, CHANGED, or
        why it couldn't be read again; never part of the deal (audit A48)."""
        from poppy_tui.safety.resource_checks import resource_rows

        read = self.resource_read
        if read is None:
            return None
        if not read.source:
            if read.ok or not read.problem or read.problem == "nowhere to read it":
                return None  # nowhere to read it from: the review says so, and there is no read
            # It timed out (or failed) before it knew where from: still a read that didn't answer.
            return Content.assemble(
                "Now: couldn't read it again: ", plain_line(read.problem, 200)
            ), False
        _, detail = resource_title(read)
        title = f"Now ({detail})"
        if not read.ok:
            return Content.assemble(
                title, ": couldn't read it again: ", plain_line(read.problem or "no answer", 200)
            ), False
        opened = self.opened_read
        if opened is None or opened is read or not opened.ok:
            age = max(0, int((app_now(self) - read.read_at).total_seconds()))
            return Content.assemble(
                title,
                f": as the review shows it ({age} s ago; nothing read since; not part of the deal)",
            ), False
        before, after = dict(resource_rows(opened.body)), dict(resource_rows(read.body))
        changes = [
            key for key in dict.fromkeys([*before, *after]) if before.get(key) != after.get(key)
        ]
        if not changes:
            return Content.assemble(title, ": unchanged since you opened the review"), False
        parts: list[Content | str | tuple[str, str]] = [
            ("CHANGED ", "bold"),
            f"since you opened the review ({title}): ",
        ]
        for number, key in enumerate(changes[:3]):
            parts += [
                "; " if number else "",
                plain_line(key, 40),
                " ",
                plain_line(before.get(key, "(absent)"), 40),
                " → ",
                plain_line(after.get(key, "(absent)"), 40),
            ]
        if len(changes) > 3:
            parts.append(f"; and {len(changes) - 3} more")
        return Content.assemble(*parts), True

    async def _confirm_after_reading(self, operation_row: int, revision_id: int) -> None:
        from poppy_tui.agent.resource_read import CONFIRM_DEADLINE_SECONDS

        latest = self.resource_read
        recent = (
            latest is not None
            and latest.ok
            and ((app_now(self) - latest.read_at).total_seconds() < RECENT_READ_SECONDS)
        )
        if not recent:
            self._reading = True
            self._show_resource_title()
            await self._read_now(operation_row, CONFIRM_DEADLINE_SECONDS, rearm=False)
        # The person may have gone on meanwhile, or new terms arrived: nothing to confirm then.
        if self.app.screen is not self or self.shown_revision_id != revision_id:
            return
        blocked = self._approve_blocked()
        if blocked is not None:
            self._say_why_not_approved(blocked)
            return
        self._open_confirm(self._confirm_note())
