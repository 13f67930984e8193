"""Words and numbers the screens show: countdowns, times, what each status means (the wording is
agent/status_words.py's, which `poppy-tui web` shows too), and what a Company offers.

No Textual here, so it is cheap to import and trivial to test.
"""

from __future__ import annotations

from poppy_tui.agent.status_words import (  # noqa: F401 (the screens import them from here)
    INTERFACE_LABELS,
    STATUS_TEXT,
    INBOX_STATUSES,
    IN_PROGRESS_STATUSES,
    status_label,
    status_meaning,
    WAITING_SIGN_IN_LABEL,
    WAITING_SIGN_IN_MEANING,
    record_status_label,
    record_status_meaning,
    interface_label,
    countdown,
    parse_stamp,
    TIME_FORMAT,
    local_time,
    local_date,
    relative,
    time_with_relative,
    plural,
    possessive,
    checks_summary,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from poppy_tui.agent.store.records import CompanyRecord


def company_interfaces(company: CompanyRecord) -> list[str]:
    """What its poppy.json offers: "API" (openapi), "MCP", and "conversation" (its agent), found
    by the same look-ups the agent sends requests with."""
    from poppy_tui.agent.companies import conversation_endpoint, mcp_url, openapi_url

    found = (
        ("API", openapi_url(company)),
        ("MCP", mcp_url(company)),
        ("conversation", conversation_endpoint(company)),
    )
    return [label for label, url in found if url]
