"""What a new revision changed (Ops 5: an approval covers one revision only): the NEW TERMS /
NEW EXPIRY block at the top of the review, each term's old and new value, the expiry's and the
summary's lines that changed, and the warning toast when a new revision replaces the one on
screen. A part of ReviewScreen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from poppy_tui.ui.format import local_time
from poppy_tui.ui.safe import diff_revisions, safe_content, safe_line_content

if TYPE_CHECKING:
    from poppy_tui.ui.checks import Checked


def revision_change(diff: Any) -> str:
    """ "new terms" when the summary or terms changed, "new expiry" when only the expiry did
    (poppy_tui.safety's RevisionKind), "same" otherwise."""
    label = diff.kind.label
    return label if label in ("new terms", "new expiry") else "same"


class RevisionChanges(Screen):
    """A base of ReviewScreen, which provides what is declared below."""

    if TYPE_CHECKING:
        checked: Checked | None

    def _show_changes(self) -> None:
        """Shown only when a previous revision is there to compare with (ui/checks.py says)."""
        changes = self.query_one("#changes", Static)
        checked = self.checked
        # A previous operation implies a readable current revision and a previous one.
        if checked is not None and checked.previous_operation is not None:
            changes.update(
                self._changes_content(
                    checked.previous, checked.previous_operation, checked.operation
                )
            )
            changes.display = True
        else:
            changes.display = False

    def _say_new_revision(self) -> None:
        """A new revision replaced the one on screen: a toast says so, and what changed."""
        what = self._change_kind()
        self.notify(
            "The Company sent a new expiry for the same terms. An approval covers one revision only, "
            "so this one needs your decision."
            if what == "new expiry"
            else "The Company sent new terms. Read them again; an approval covers one revision only.",
            title="New revision",
            severity="warning",
            markup=False,
            timeout=8,
        )

    def _change_kind(self) -> str | None:
        checked = self.checked
        if checked is None or checked.previous_operation is None or checked.operation is None:
            return None
        return revision_change(diff_revisions(checked.previous_operation, checked.operation))

    def _changes_content(self, previous: Any, previous_operation: Any, operation: Any) -> Content:
        seen = "you saw" if previous.seen_at else "before this one (you did not open it)"
        what = revision_change(diff_revisions(previous_operation, operation))
        label = {"new terms": "NEW TERMS: ", "new expiry": "NEW EXPIRY: "}.get(
            what, "NEW REVISION: "
        )
        lines: list[Content | str | tuple[str, str]] = [
            (label, "bold"),
            "only the expiry changed since revision "
            if what == "new expiry"
            else "changed since revision ",
            safe_line_content(previous.revision, 80),
            f" {seen}. An approval covers one revision, so this one needs your decision.\n",
        ]
        diff = diff_revisions(previous_operation, operation)
        if not diff.changed:
            lines.append(Content.styled("The summary, terms and expiry are the same.", "dim"))
        for change in diff.terms_changes:
            old = (
                safe_content(change.old)
                if change.old is not None
                else Content.styled("(absent)", "dim")
            )
            new = (
                safe_content(change.new)
                if change.new is not None
                else Content.styled("(absent)", "dim")
            )
            lines += [
                ("  " + change.path, "bold"),
                f"  {change.kind}\n",
                ("    was  ", "dim"),
                old,
                "\n",
                ("    now  ", "dim"),
                new,
                "\n",
            ]
        if diff.expires_changed:
            lines += [
                ("  expires_at", "bold"),
                "  changed\n",
                ("    was  ", "dim"),
                safe_content(previous_operation.expires_at_text),
                (f"  = {local_time(previous_operation.expires_at)}", "dim"),
                "\n",
                ("    now  ", "dim"),
                safe_content(operation.expires_at_text),
                (f"  = {local_time(operation.expires_at)}", "dim"),
                "\n",
            ]
        if diff.summary_diff:
            lines.append(("  summary (- was, + now)\n", "bold"))
            for line in diff.summary_diff:
                if line.startswith(("--- ", "+++ ")):
                    continue
                style = (
                    "$error"
                    if line.startswith("-")
                    else "$success"
                    if line.startswith("+")
                    else "dim"
                )
                lines += ["    ", safe_content(line).stylize(style), "\n"]
        return Content.assemble(*lines)
