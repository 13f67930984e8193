"""Hostile characters in the summary and the terms, as findings (what the sanitiser flagged). No Textual."""

from __future__ import annotations

from collections.abc import Mapping

from poppy_tui.protocol.operation import Operation
from poppy_tui.safety.findings import _Findings
from poppy_tui.safety.sanitize import has_mixed_script_word, sanitize, sanitize_line
from poppy_tui.safety.terms_values import _UNBOUNDED, _dicts, _field, _flatten, format_path

_FLAG_FINDINGS: tuple[tuple[str, str, str], ...] = (
    (
        "bidi",
        "bidi_control",
        "holds bidirectional control characters, which can reorder what you see; they are shown as ⟨U+…⟩",
    ),
    (
        "escape",
        "escape_sequence",
        "holds terminal escape sequences; they are shown as \\x1b… and do nothing",
    ),
    ("control", "control_character", "holds control characters; they are shown as \\xNN"),
    (
        "invisible",
        "invisible_character",
        "holds invisible characters, which can hide or change text; they are shown as ⟨U+…⟩",
    ),
    (
        "markup",
        "markup_tag",
        "holds text that looks like an action or link tag; it is shown as plain text and does nothing",
    ),
)


def _text_safety(
    findings: _Findings,
    flags: frozenset[str],
    where: str,
    field: str,
    capped: bool,
    mixed_words: bool,
) -> None:
    add = findings.add_capped if capped else findings.add
    for flag, code, text in _FLAG_FINDINGS:
        if flag not in flags:
            continue
        if flag == "control" and "escape" in flags:
            continue
        add(code, f"{where} {text}.", field)
    if "mixed_script" in flags:
        if mixed_words:
            add(
                "mixed_script",
                f'{where} mixes alphabets within a word (look-alike letters, as in a fake "pаypal").',
                field,
                "danger",
            )
        else:
            add(
                "mixed_script",
                f"{where} mixes letters from different alphabets; check names and amounts closely.",
                field,
                "warning",
            )


def _check_text(findings: _Findings, operation: Operation) -> None:
    summary = sanitize(operation.summary)
    _text_safety(findings, summary.flags, "The summary", "summary", False, True)
    terms = operation.terms
    if not isinstance(terms, Mapping):
        return
    for path, node in _dicts(terms):
        for key in node:
            flags = sanitize_line(str(key), _UNBOUNDED).flags
            if flags:
                where = f"A key in the terms ({format_path((*path, str(key)))})"
                _text_safety(
                    findings,
                    flags,
                    where,
                    _field((*path, str(key))),
                    True,
                    has_mixed_script_word(str(key)),
                )
    for path, value in _flatten(terms):
        if isinstance(value, str) and path:
            flags = sanitize_line(value, _UNBOUNDED).flags
            if flags:
                where = f"The terms value {format_path(path)}"
                _text_safety(
                    findings, flags, where, _field(path), True, has_mixed_script_word(value)
                )
