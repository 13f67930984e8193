"""How a host a secret goes to (or a link leads to) is shown: the way the browser and DNS read it.

An international name is shown as its ASCII form (A-labels, `xn--...`), the name the connection
actually uses, so `shоp.test` with a Cyrillic о can't pass for shop.test: it shows as
`xn--shp-ted.test`. A label that mixes alphabets (UTS #39, safety/sanitize.py) is marked as a
look-alike; another international name keeps its own letters beside the ASCII form. A single-script
name whose letters merely resemble Latin ones (all-Cyrillic `аррӏе`) is not caught by the mark,
but it too is shown in its ASCII form first. No Textual.
"""

from __future__ import annotations

from dataclasses import dataclass

from poppy_tui.safety.sanitize import mixed_script, sanitize_line

LOOKALIKE_MARK = "⚠"


@dataclass(frozen=True)
class ShownHost:
    text: (
        str  # what to show: the ASCII host (and :port), or the sanitised input when it isn't a host
    )
    lookalike: bool  # a label mixes alphabets
    international: str | None  # the name in its own letters (sanitised), when not a look-alike

    @property
    def line(self) -> str:
        """One line: "xn--shp-ted.test ⚠ look-alike address", "xn--bcher-kva.de (bücher.de)"."""
        if self.lookalike:
            return f"{self.text} {LOOKALIKE_MARK} look-alike address"
        if self.international:
            return f"{self.text} ({self.international})"
        return self.text

    @property
    def warning(self) -> str | None:
        if not self.lookalike:
            return None
        return (
            f"{LOOKALIKE_MARK} {self.text} is a look-alike address: its name mixes letters from different "
            "alphabets, so it can pass for another site's. It is shown as the browser reads it."
        )


def show_host(netloc: str, max_chars: int = 100) -> ShownHost:
    """`host` or `host:port` as the browser reads it (protocol/web_address.py), marked when a label
    mixes alphabets."""
    from poppy_tui.protocol.web_address import read_like_a_browser

    read = (
        read_like_a_browser(f"https://{netloc}/")
        if netloc and not any(c in netloc for c in "/\\@?#")
        else None
    )
    if read is None:
        shown = sanitize_line(netloc or "", max_chars)
        return ShownHost(shown.text or "(no host)", "mixed_script" in shown.flags, None)
    text = read.netloc if ":" in netloc.rsplit("]", 1)[-1] else read.host
    labels = read.host.split(".")
    if not any(label.startswith("xn--") for label in labels):
        return ShownHost(sanitize_line(text, max_chars).text, False, None)
    import ada_url

    unicode_labels = [
        ada_url.idna_to_unicode(label) if label.startswith("xn--") else label for label in labels
    ]
    lookalike = any(mixed_script(label) for label in unicode_labels)
    international = None if lookalike else sanitize_line(".".join(unicode_labels), max_chars).text
    return ShownHost(sanitize_line(text, max_chars).text, lookalike, international)
