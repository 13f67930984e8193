"""Make Company text safe to put on a terminal, and visible rather than silently cleaned.

Everything a Company sends (summary, terms, names) is hostile. A terminal acts on
control and escape bytes, bidi controls reorder what is shown, and invisible code
points hide text. Nothing here deletes: each such character becomes a visible
token, so the User can see that something odd was sent, and a flag says what.

Tokens (docs/safety.md):
- C0 controls except \\n and \\t, DEL and C1 controls: ``\\xNN`` written out in
  lower-case hex (ESC -> ``\\x1b``, CSI U+009B -> ``\\x9b``), the notation the
  Git and kubectl fixes chose; one scheme covers C1, which has no control pictures.
- bidi controls and invisibles: ``⟨U+XXXX⟩``.

Pure and stdlib-only: headless code imports this without paying for Textual.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = [
    "FLAGS",
    "Sanitized",
    "mixed_script",
    "mixed_script_words",
    "reading_text",
    "sanitize",
    "sanitize_line",
]

FLAGS = frozenset({"control", "escape", "bidi", "invisible", "markup", "truncated", "mixed_script"})

NEWLINE_TOKEN = "⏎"
TAB_TOKEN = "⇥"

_BIDI = frozenset(
    [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)

# Not caught by category (Mn/Lo/So) but shown as nothing, or as a blank that
# passes for a space: default-ignorables, variation selectors, Hangul fillers,
# the blank Braille pattern. Unicode's Default_Ignorable_Code_Point plus fillers.
_EXTRA_INVISIBLE = frozenset(
    [
        0x034F,  # combining grapheme joiner
        0x115F, 0x1160, 0x3164, 0xFFA0,  # Hangul fillers
        0x17B4, 0x17B5,  # Khmer inherent vowels
        *range(0x180B, 0x1810),  # Mongolian free variation selectors
        *range(0xFE00, 0xFE10),  # variation selectors 1-16
        0x2800,  # braille pattern blank
    ]
)
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Zl", "Zp", "Co", "Cn", "Cs"})

# ESC followed by anything printable starts an escape sequence (CSI, OSC, DCS,
# SOS/PM/APC, charset and two-byte forms); the 8-bit introducers DCS, SOS, CSI,
# ST, OSC, PM and APC are sequences on their own in terminals that honour C1.
_ESCAPE_RE = re.compile(r"\x1b[\x20-\x7e]|[\x90\x98\x9b-\x9f]")

# A bracketed tag that would be an action or a hyperlink if anyone parsed it as
# Textual or Rich markup. Candidate tags first, so the scan stays linear.
_TAG_RE = re.compile(r"\[[^\[\]\n]*\]")
_ACTION_OR_LINK_RE = re.compile(r"@\s*[A-Za-z_]|\blink\b\s*=", re.IGNORECASE)

_WORD_RE = re.compile(r"\w+")

_classify_cache: dict[str, tuple[str, str] | None] = {}


@dataclass(frozen=True)
class Sanitized:
    """Text with every hostile character made visible.

    `marks` are the (start, end) offsets in `text` of tokens *we* inserted, so a
    renderer can style them apart from look-alike text the Company typed itself.
    """

    text: str
    flags: frozenset[str]
    marks: tuple[tuple[int, int], ...] = ()


def _classify(ch: str) -> tuple[str, str] | None:
    """The token and flag for one character, or None if it is shown as is."""
    cached = _classify_cache.get(ch, False)
    if cached is not False:
        return cached  # type: ignore[return-value]
    cp = ord(ch)
    result: tuple[str, str] | None
    category = unicodedata.category(ch)
    if ch in "\n\t":
        result = None
    elif category == "Cc":
        result = (f"\\x{cp:02x}", "control")
    elif cp in _BIDI:
        result = (f"⟨U+{cp:04X}⟩", "bidi")
    elif (
        category in _INVISIBLE_CATEGORIES
        or cp in _EXTRA_INVISIBLE
        or 0xE0100 <= cp <= 0xE01EF  # variation selectors supplement
    ):
        result = (f"⟨U+{cp:04X}⟩", "invisible")
    else:
        result = None
    if len(_classify_cache) < 65536:
        _classify_cache[ch] = result
    return result


def _scan(text: str, line: bool) -> tuple[dict[str, str], set[str]]:
    """Replacement table and flags for `text`, from its distinct characters.

    Looking at distinct characters keeps a 1 MB summary to one C-speed pass.
    """
    table: dict[str, str] = {}
    flags: set[str] = set()
    if text.isascii() and text.isprintable():
        return table, flags
    for ch in set(text):
        hit = _classify(ch)
        if hit is not None:
            table[ch] = hit[0]
            flags.add(hit[1])
    if line:
        if "\n" in text:
            table["\n"] = NEWLINE_TOKEN
        if "\t" in text:
            table["\t"] = TAB_TOKEN
    if "control" in flags and _ESCAPE_RE.search(text):
        flags.add("escape")
    return table, flags


def _looks_like_action_markup(text: str) -> bool:
    if "[" not in text:
        return False
    for tag in _TAG_RE.finditer(text):
        if _ACTION_OR_LINK_RE.search(tag.group()):
            return True
    return False


def _apply(text: str, table: dict[str, str]) -> tuple[str, tuple[tuple[int, int], ...]]:
    if not table:
        return text, ()
    runs = re.compile("[" + "".join(re.escape(ch) for ch in table) + "]+")
    pieces: list[str] = []
    marks: list[tuple[int, int]] = []
    last = 0
    out_len = 0
    for match in runs.finditer(text):
        start, end = match.span()
        if start > last:
            pieces.append(text[last:start])
            out_len += start - last
        replacement = "".join([table[ch] for ch in match.group()])
        pieces.append(replacement)
        marks.append((out_len, out_len + len(replacement)))
        out_len += len(replacement)
        last = end
    if last < len(text):
        pieces.append(text[last:])
    return "".join(pieces), tuple(marks)


def sanitize(text: str) -> Sanitized:
    """Multi-line text: keeps \\n and \\t, makes every other hostile character visible.

    Flags "mixed_script" only when a single word mixes scripts ("pаypal"), since
    a long text may legitimately use several languages.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    table, flags = _scan(text, line=False)
    if _looks_like_action_markup(text):
        flags.add("markup")
    if not text.isascii() and mixed_script_words(text):
        flags.add("mixed_script")
    out, marks = _apply(text, table)
    return Sanitized(out, frozenset(flags), marks)


def sanitize_line(text: str, max_chars: int) -> Sanitized:
    """One line for names and list cells: \\n -> ⏎, \\t -> ⇥, at most `max_chars` shown.

    A longer text ends in "…(+N chars)", N counting the Company's characters not
    shown, and is flagged "truncated". Tokens are never cut in half. Flags cover
    the whole text, including what was cut off.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    max_chars = max(0, int(max_chars))
    table, flags = _scan(text, line=True)
    if _looks_like_action_markup(text):
        flags.add("markup")
    if not text.isascii() and mixed_script(text):
        flags.add("mixed_script")
    out, marks = _apply(text, table)
    if len(out) <= max_chars:
        return Sanitized(out, frozenset(flags), marks)
    # Find how many of the Company's characters fit, whole tokens only.
    shown = 0
    used = 0
    for ch in text:
        width = len(table.get(ch, ch))
        if used + width > max_chars:
            break
        used += width
        shown += 1
    out, marks = _apply(text[:shown], table)
    marker = f"…(+{len(text) - shown} chars)"
    marks = (*marks, (len(out), len(out) + len(marker)))
    flags.add("truncated")
    return Sanitized(out + marker, frozenset(flags), marks)


# --- text as a reader takes it ----------------------------------------------

# A whole escape sequence, as a terminal consumes it: CSI with its parameters and
# final byte, OSC/DCS/SOS/PM/APC up to BEL or ST (or the end of the line), and the
# two-byte forms (ESC 7, ESC 8, ESC c, ESC ( B). Linear: no nested repetition.
_WHOLE_ESCAPE_RE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]"
)
# Invisibles that render as a blank rather than as nothing.
_BLANK_FILLERS = frozenset([0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800])


def reading_text(text: str) -> str:
    """The text as a reader takes it in, for comparing amounts and IDs, never for display.

    Zero-width and bidi characters are dropped (a terminal that shows them as
    nothing shows "70\u200b0.00" as 700.00), blank fillers become a space, a
    whole escape sequence is dropped (so "ESC 8" leaves no "8" behind), and any
    other control character is a space. Display keeps them all as tokens.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if text.isascii() and text.isprintable():
        return text
    if "\x1b" in text or any(0x90 <= ord(ch) <= 0x9F for ch in set(text)):
        text = _WHOLE_ESCAPE_RE.sub("", text)
    table: dict[int, str | None] = {}
    for ch in set(text):
        hit = _classify(ch)
        if hit is None:
            continue
        if hit[1] == "control":
            table[ord(ch)] = " "
        elif ord(ch) in _BLANK_FILLERS:
            table[ord(ch)] = " "
        else:
            table[ord(ch)] = None
    return text.translate(table) if table else text


# --- mixed scripts -----------------------------------------------------------

# Scripts that mix in ordinary CJK writing (UTS #39 "highly restrictive").
_ALLOWED_MIXES = (
    frozenset({"LATIN", "FULLWIDTH LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "FULLWIDTH LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "FULLWIDTH LATIN", "HAN", "HANGUL"}),
)
_SCRIPT_ALIASES = {
    "CJK": "HAN",
    "IDEOGRAPHIC": "HAN",
    "KATAKANA-HIRAGANA": "KATAKANA",
    "FEMININE": "LATIN",  # ª
    "MASCULINE": "LATIN",  # º
}
_script_cache: dict[str, str | None] = {}


def _script(ch: str) -> str | None:
    """The script of a letter from its Unicode name; None for non-letters.

    Letter-like symbols (KELVIN SIGN, DOUBLE-STRUCK C, MATHEMATICAL BOLD A) get
    their own "script", so they count as mixing with the Latin they imitate.
    """
    if ch < "\x80":
        return "LATIN" if ch.isalpha() else None
    cached = _script_cache.get(ch, False)
    if cached is not False:
        return cached  # type: ignore[return-value]
    category = unicodedata.category(ch)
    script: str | None
    if category[0] != "L" and category != "Nl":
        script = None
    else:
        words = unicodedata.name(ch, "").split()
        if not words or words[0] == "MODIFIER":
            script = None
        elif words[0] == "FULLWIDTH" and len(words) > 1:
            script = "FULLWIDTH " + words[1] if words[1] == "LATIN" else _SCRIPT_ALIASES.get(words[1], words[1])
        elif words[0] == "HALFWIDTH" and len(words) > 1:
            script = _SCRIPT_ALIASES.get(words[1], words[1])
        else:
            script = _SCRIPT_ALIASES.get(words[0], words[0])
    if len(_script_cache) < 65536:
        _script_cache[ch] = script
    return script


def _scripts(text: str) -> set[str]:
    found: set[str] = set()
    for ch in set(text):
        script = _script(ch)
        if script is not None:
            found.add(script)
    return found


def _is_mixed(scripts: set[str]) -> bool:
    if len(scripts) < 2:
        return False
    if "LATIN" in scripts and "FULLWIDTH LATIN" in scripts:
        return True  # "Pａypal": CJK text uses one width or the other, not both in a name
    return not any(scripts <= allowed for allowed in _ALLOWED_MIXES)


def mixed_script(text: str) -> bool:
    """True when letters of `text` come from scripts that don't normally mix.

    For short fields (names, recipients, amounts): "pаypal" with a Cyrillic а,
    "Ｐaypal", "Ⅰnvoice". Digits and punctuation are common to all scripts.
    """
    if not isinstance(text, str) or text.isascii():
        return False
    return _is_mixed(_scripts(text))


def mixed_script_words(text: str) -> list[str]:
    """The words of a longer text that mix scripts within themselves."""
    if not isinstance(text, str) or text.isascii() or not _is_mixed(_scripts(text)):
        return []
    return [w for w in (m.group() for m in _WORD_RE.finditer(text)) if not w.isascii() and mixed_script(w)]
