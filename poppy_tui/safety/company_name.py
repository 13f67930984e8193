"""How a Company's name is shown: sanitised, marked when it could pass for another
name, and always beside the domain poppy verified (Ops §5: the person is shown the Company's
name; docs/safety.md, "Company names"). No Textual.

A Company picks its own name (`Маnzanita Outfitters`, with a Cyrillic М and а,
looks exactly like the real one), but not the domain its poppy.json was fetched
from. So every place that shows a name shows the domain too, and a name that
mixes scripts or hides characters carries a mark saying so.
"""

from __future__ import annotations

from dataclasses import dataclass

from poppy_tui.safety.sanitize import sanitize_line
from poppy_tui.safety.wording import possessive

__all__ = ["NAME_MARK", "CompanyLabel", "company_label"]

NAME_MARK = "⚠"

# Sanitiser flags that let a name pass for another, and what to call them. Control
# characters and escapes are not among them: their \xNN tokens already stand out.
_REASONS = (
    ("mixed_script", "mixes letters from different alphabets (look-alike letters)"),
    ("bidi", "holds text-direction controls"),
    ("invisible", "holds invisible characters"),
)


@dataclass(frozen=True)
class CompanyLabel:
    """A Company name ready to show. Every field is sanitised, one line."""

    name: str  # the Company's name, tokens for hostile characters, cut at max_chars
    domain: str  # the domain poppy verified (discovery), never taken from the name
    reasons: tuple[str, ...]  # why it is marked ("its name mixes letters…"); empty when it isn't

    @property
    def marked(self) -> bool:
        return bool(self.reasons)

    @property
    def marked_name(self) -> str:
        """The name with the mark in front when it is marked: "⚠ Маnzanita Outfitters"."""
        return f"{NAME_MARK} {self.name}" if self.marked else self.name

    @property
    def text(self) -> str:
        """Name and domain together: "⚠ Маnzanita Outfitters (manzanita.example)"."""
        return f"{self.marked_name} ({self.domain})"

    @property
    def possessive(self) -> str:
        """ "Manzanita Outfitters' (manzanita.example)": the domain stays beside the name."""
        return f"{possessive(self.marked_name)} ({self.domain})"

    @property
    def warning(self) -> str | None:
        """One sentence saying why the name is marked, or None."""
        if not self.reasons:
            return None
        return (
            f"{NAME_MARK} This Company: {'; '.join(self.reasons)}. It may imitate another Company; "
            f"go by the verified domain, {self.domain}."
        )


def company_label(name: object, domain: object, max_chars: int = 60) -> CompanyLabel:
    """The display of a Company's `name` beside its verified `domain`.

    The name is marked when it mixes scripts (Unicode Script_Extensions, UTS #39)
    or holds bidi or invisible characters. The domain is checked the same way.
    `marked_name` shows at most `max_chars` characters, mark included (then the
    sanitiser's "…(+N chars)" marker, as for any cut text).
    """
    name_text = "" if name is None else str(name)
    shown_name = sanitize_line(name_text, max_chars)
    shown_domain = sanitize_line("" if domain is None else str(domain), max(20, max_chars))
    reasons = tuple(f"its name {text}" for flag, text in _REASONS if flag in shown_name.flags)
    reasons += tuple(f"its domain {text}" for flag, text in _REASONS if flag in shown_domain.flags)
    if reasons and max_chars > len(NAME_MARK) + 1:  # the mark counts toward max_chars
        shown_name = sanitize_line(name_text, max_chars - len(NAME_MARK) - 1)
    return CompanyLabel(shown_name.text or "(no name)", shown_domain.text or "(no domain)", reasons)
