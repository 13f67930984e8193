"""A Select of discovered Companies that keeps its choice when the list is refreshed."""

from __future__ import annotations

from collections.abc import Iterable

from textual.widgets import Select

from poppy_tui.agent.store.records import CompanyRecord
from poppy_tui.ui.safe import company_content


class CompanySelect(Select[int]):
    def __init__(
        self, *, prompt: str, id: str, preselect: int | None = None, pick_only_one: bool = False
    ) -> None:
        super().__init__([], prompt=prompt, id=id)
        self._token: object = None
        # Chosen once, when the options first arrive; later refreshes keep whatever the person picked.
        self._preselect = preselect
        self._pick_only_one = pick_only_one

    def show_companies(self, companies: Iterable[CompanyRecord]) -> None:
        companies = list(companies)
        if not self.children:
            # Its own parts are not mounted yet (a screen's on_mount ran first, as it can under
            # load): Select.set_options would look for its overlay and fail. Once they are.
            self.call_after_refresh(self.show_companies, companies)
            return
        token = tuple((c.id, c.name, c.domain) for c in companies)
        if token == self._token:
            return
        first_time = self._token is None
        self._token = token
        value = self.value
        self.set_options([(company_content(c.name, c.domain, 40), c.id) for c in companies])
        ids = {c.id for c in companies}
        if first_time and self._preselect in ids:
            self.value = self._preselect
        elif first_time and self._pick_only_one and len(ids) == 1:
            self.value = companies[0].id
        elif value in ids:
            self.value = value

    def choose(self, company_id: int) -> bool:
        """Select this Company if it is offered here; False when it isn't (the list is filtered)."""
        if self.value == company_id:
            return True
        if not self.children and self._token is None:
            # The options are not shown yet (show_companies waits for the parts): picked when
            # they are, where offered.
            self._preselect = company_id
            return True
        try:
            self.value = company_id
        except Exception:  # noqa: BLE001 - Select refuses a value it doesn't offer (InvalidSelectValueError)
            return False
        return True
