"""Where the operation stands, fed to the review's banner (ui/widgets/outcome_view.py) and its
"Sending and outcome" section: the status, the arming and grace countdowns, why approvals can't
be signed here, an earlier decline of the same action, a demo Company that has stopped, the
lifecycle's explanation of an approval on its way or held, and what the sign-in now is to it;
the expiry line settles to the status once decided for good. A part of ReviewScreen."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from textual.screen import Screen

from poppy_tui.agent.store.records import OperationRecord, Status
from poppy_tui.ui.format import status_label
from poppy_tui.ui.safe import plain_line
from poppy_tui.ui.widgets.countdown import Countdown
from poppy_tui.ui.widgets.outcome_view import OutcomeBanner, ProgressView

log = logging.getLogger(__name__)


class StatusSection(Screen):
    """A base of ReviewScreen, which provides what is declared below."""

    if TYPE_CHECKING:
        agent: Any
        store: Any
        poppy: Any

        def arming_left(self) -> float: ...
        def _account_hold(self, record: OperationRecord) -> tuple[str, str] | None: ...
        def _follow_status(self) -> None: ...
        def _update_footer(self) -> None: ...

    def _show_status(self, record: OperationRecord) -> None:
        expiry = self.query_one("#review-expiry", Countdown)
        # Once decided for good, the expiry no longer matters: a live countdown would say it does.
        expiry.settle(
            status_label(record.status)
            if record.status.is_final and record.status != Status.EXPIRED
            else None
        )
        banner = self.query_one("#outcome", OutcomeBanner)
        banner.arming_left = self.arming_left
        banner.unsignable = lambda: getattr(self.app, "unsignable", None)
        from poppy_tui.agent.earlier_decline import declined_earlier

        banner.declined_before = declined_earlier(self.store, record)
        banner.company_stopped = self._company_stopped(record)
        banner.where_it_stands = self._where_it_stands(record)
        banner.account_hold = self._account_hold(record)
        banner.show_record(record)
        self.query_one("#progress", ProgressView).show_progress(
            record, self.store.attempts(record.id)
        )
        self._follow_status()
        self._update_footer()

    def _where_it_stands(self, record: OperationRecord) -> Any:
        """The lifecycle's explanation of an approval on its way or held (Agent.explain): the
        words `poppy-tui show` prints, so the two can't disagree. None for other states."""
        explain = getattr(self.agent, "explain", None)
        if explain is None or record.status not in (Status.APPROVED, Status.SENDING):
            return None
        try:
            return explain(record.id)
        except Exception:  # logged: a locked store; the banner says the status alone
            log.warning("explaining operation %s failed", record.id, exc_info=True)
            return None

    def _company_stopped(self, record: OperationRecord) -> str | None:
        """Its Company ran in a demo that has ended (agent/demo_marker.py): what to say, or None."""
        stopped = getattr(self.app, "stopped_demo", None)
        if stopped is None or not self.poppy.stopped_company(record.company.base_url):
            return None
        from poppy_tui.agent.demo_marker import stopped_demo_line

        return stopped_demo_line(stopped, plain_line(record.company.name, 60))
