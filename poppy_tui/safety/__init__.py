"""Showing hostile Company text safely, and checking an operation before approval.

Names are exported lazily (PEP 562) so `import poppy_tui.safety` stays free of
Textual: only the summary module, which builds `Content`, imports it.
"""

from __future__ import annotations

from poppy_tui.lazy_exports import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from poppy_tui.safety.company_name import CompanyLabel, company_label
    from poppy_tui.safety.discrepancies import (
        CODES,
        Finding,
        RevisionDiff,
        RevisionKind,
        TermsChange,
        check_operation,
        classify_revision,
        diff_revisions,
        format_path,
        key_amount,
        terms_rows,
    )
    from poppy_tui.safety.sanitize import (
        Sanitized,
        mixed_script,
        mixed_script_words,
        reading_text,
        sanitize,
        sanitize_line,
    )
    from poppy_tui.safety.summary import (
        RenderedSummary,
        company_content,
        render_summary,
        safe_content,
        safe_line_content,
    )
    from poppy_tui.safety.wording import findings_tally, plural, possessive

_EXPORTS = {
    "Sanitized": "sanitize",
    "sanitize": "sanitize",
    "sanitize_line": "sanitize",
    "mixed_script": "sanitize",
    "mixed_script_words": "sanitize",
    "reading_text": "sanitize",
    "RenderedSummary": "summary",
    "render_summary": "summary",
    "safe_content": "summary",
    "safe_line_content": "summary",
    "company_content": "summary",
    "CompanyLabel": "company_name",
    "company_label": "company_name",
    "findings_tally": "wording",
    "plural": "wording",
    "possessive": "wording",
    "Finding": "discrepancies",
    "RevisionDiff": "discrepancies",
    "TermsChange": "discrepancies",
    "RevisionKind": "discrepancies",
    "classify_revision": "discrepancies",
    "CODES": "discrepancies",
    "check_operation": "discrepancies",
    "diff_revisions": "discrepancies",
    "key_amount": "discrepancies",
    "terms_rows": "discrepancies",
    "format_path": "discrepancies",
}

__all__ = [
    "CODES",
    "CompanyLabel",
    "Finding",
    "RenderedSummary",
    "RevisionDiff",
    "RevisionKind",
    "Sanitized",
    "TermsChange",
    "check_operation",
    "classify_revision",
    "company_content",
    "company_label",
    "diff_revisions",
    "findings_tally",
    "format_path",
    "key_amount",
    "mixed_script",
    "mixed_script_words",
    "plural",
    "possessive",
    "reading_text",
    "render_summary",
    "safe_content",
    "safe_line_content",
    "sanitize",
    "sanitize_line",
    "terms_rows",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
