"""Showing hostile Company text safely, and checking an operation before approval.

Names are exported lazily (PEP 562) so `import poppy_tui.safety` stays free of
Textual: only the summary module, which builds `Content`, imports it.
"""

from __future__ import annotations

from poppy_tui.lazy_exports import lazy_exports

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

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
