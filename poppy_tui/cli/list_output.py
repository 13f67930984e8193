"""What the listing commands print, one item at a time: a queue row (`pending`, `history`, and
their `--json`), and a Company with its sign-in (`companies list`). Import these from
cli/output.py, like the rest of what the command line prints."""

from __future__ import annotations

from poppy_tui.cli.safe_text import COMPANY_INDENT, safe_line
from poppy_tui.cli.status_words import settled_expiry_text, status_name, utc_text

TYPE_CHECKING = False  # typing is not imported on a command's path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from poppy_tui.agent.store import CompanyRecord, OperationRow


# ---- JSON shapes ----------------------------------------------------------------------------


def company_interfaces(company: CompanyRecord) -> dict[str, str | None]:
    """Where each interface is: the very look-ups the agent uses to send requests."""
    from poppy_tui.agent.companies import conversation_endpoint, mcp_url, openapi_url

    return {
        "api": openapi_url(company),
        "mcp": mcp_url(company),
        "conversation": conversation_endpoint(company),
    }


def company_json(company: CompanyRecord) -> dict[str, Any]:
    return {
        "id": company.id,
        "name": company.name,
        "domain": company.domain,
        "base_url": company.base_url,
        "supports_operations": company.supports_operations,
        "interfaces": company_interfaces(company),
        "discovered_at": company.discovered_at,
        "updated_at": company.updated_at,
    }


def row_json(row: OperationRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "operation_id": row.operation_id,
        "company": {"id": row.company_id, "name": row.company_name, "domain": row.company_domain},
        "interface": row.interface,
        "status": row.status.value,
        "summary": row.summary,
        "terms": row.terms,
        "expires_at": utc_text(row.expires_at),
        "revision": row.revision,
        "revision_count": row.revision_count,
        "approved_revision": row.approved_revision,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "decided_at": row.decided_at,
        "outcome_detail": row.outcome_detail,
        # An approval held back until the person signs in again: status stays "sending".
        "waiting_sign_in": row.waiting_sign_in,
        # Who asked for the current terms (docs/cli.md; the agent's name through the gate).
        "requested_by": {"origin": row.origin, "agent": row.requester},
    }


def sign_in_json(record: Any) -> dict[str, Any] | None:
    if record is None:
        return None
    return {
        "kind": record.kind,
        "account": record.account,
        "scopes": list(record.scopes),
        "issuer": record.issuer,
        "signed_in_at": record.signed_in_at,
    }


# ---- plain text for people (and screen readers: no tables, no box drawing) --------------------


def company_line(company: CompanyRecord) -> str:
    """Name (marked ⚠ when it could imitate another) and verified domain, then the rest;
    a marked name gets a second, indented line saying why."""
    from poppy_tui.safety.company_name import company_label

    label = company_label(company.name, company.domain, 80)
    interfaces = [name for name, url in company_interfaces(company).items() if url]
    line = (
        f"{label.text} at {safe_line(company.base_url)}; "
        f"operations v2: {'yes' if company.supports_operations else 'no'}; "
        f"interfaces: {', '.join(interfaces) or 'none'}"
    )
    return f"{line}\n{COMPANY_INDENT}{label.warning}" if label.warning else line


def _company_marked_name(name: object, domain: object, max_chars: int) -> str:
    """A queue row's Company: the name with ⚠ when it could imitate another (`show` gives the domain)."""
    from poppy_tui.safety.company_name import company_label

    return company_label(name, domain, max_chars).marked_name


def row_line(row: OperationRow) -> str:
    from poppy_tui.safety.who_asked import requester_text

    status = status_name(row)
    return (
        f"{row.id}  {status}  {_company_marked_name(row.company_name, row.company_domain, 60)}  "
        f"{settled_expiry_text(row.status, row.expires_at)}  "
        f"asked by {requester_text(row.origin, row.requester)}\n"
        f"{COMPANY_INDENT}{safe_line(row.summary)}"
    )


def sign_in_text(record: Any) -> str:
    """`companies list`'s sign-in column: who is signed in, and with which scopes."""
    if record is None:
        return "signed out"
    who = f" as {safe_line(record.account, 100)}" if record.account else ""
    return f"signed in{who} ({record.kind}), scopes {safe_line(' '.join(record.scopes), 500) or 'none'}"
