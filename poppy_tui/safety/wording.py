"""Counts, plurals and possessives for the text safety builds (docs/safety.md, "Wording"). No
Textual.

"1 warning", "2 warnings", "Manzanita Outfitters'" rather than "1 warning
findings" or "Manzanita Outfitters's". The UI uses the same helpers for text it
builds around findings and Company names.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["count", "findings_tally", "followed_by", "plural", "possessive"]

_IRREGULAR = {
    "danger": "dangers",
    "warning": "warnings",
    "finding": "findings",
    "is": "are",
    "was": "were",
}


def plural(word: str, number: int, plural_form: str | None = None) -> str:
    """`word` as it goes with `number`: plural("warning", 1) == "warning", with 2 "warnings"."""
    if number == 1:
        return word
    if plural_form is not None:
        return plural_form
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def count(number: int, word: str, plural_form: str | None = None) -> str:
    """count(1, "second") == "1 second", count(3, "field") == "3 fields"."""
    return f"{number} {plural(word, number, plural_form)}"


def possessive(name: str) -> str:
    """ "Manzanita Outfitters'" for a name ending in s, "Acme's" otherwise.

    Give it text that is already safe to show (a sanitised name)."""
    stripped = name.rstrip()
    if not stripped:
        return name
    return stripped + ("'" if stripped[-1] in "sS" else "'s")


def followed_by(text: str, more: str) -> str:
    """`text` (often a Company's own sentence) then `more`, punctuated once: "That code isn't
    right." and "try again" give "That code isn't right. Try again.", not "right.; try again"."""
    stripped = text.rstrip()
    if not stripped or not more:
        return stripped or more
    if stripped[-1] in ".!?":
        return f"{stripped} {more[:1].upper()}{more[1:]}."
    return f"{stripped.rstrip(';:,')}; {more}"


def findings_tally(findings: Iterable[object]) -> str:
    """ "1 danger, 2 warnings", "2 warnings", "no findings": zero counts left out.

    Takes anything with a `severity` ("danger", "warning" or "info"); info
    findings are notes, not counted here.
    """
    severities = [getattr(f, "severity", None) for f in findings]
    parts = [
        count(severities.count(severity), severity)
        for severity in ("danger", "warning")
        if severities.count(severity)
    ]
    return ", ".join(parts) if parts else "no findings"
