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

Pure, stdlib plus `regex` (Unicode script data): headless code imports this
without paying for Textual.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Iterator

if TYPE_CHECKING:
    import regex

__all__ = [
    "FLAGS",
    "Sanitized",
    "mixed_script",
    "has_mixed_script_word",
    "mixed_script_words",
    "reading_text",
    "sanitize",
    "sanitize_line",
]

FLAGS = frozenset({"control", "escape", "bidi", "invisible", "markup", "truncated", "mixed_script"})

NEWLINE_TOKEN = "⏎"
TAB_TOKEN = "⇥"

_BIDI = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])

# Not caught by category (Mn/Lo/So) but shown as nothing, or as a blank that
# passes for a space: default-ignorables, variation selectors, Hangul fillers,
# the blank Braille pattern. Unicode's Default_Ignorable_Code_Point plus fillers.
_EXTRA_INVISIBLE = frozenset(
    [
        0x034F,  # combining grapheme joiner
        0x115F,
        0x1160,
        0x3164,
        0xFFA0,  # Hangul fillers
        0x17B4,
        0x17B5,  # Khmer inherent vowels
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
    return any(_ACTION_OR_LINK_RE.search(tag.group()) for tag in _TAG_RE.finditer(text))


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
    if not text.isascii() and has_mixed_script_word(text):
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
    hidden = len(text) - shown
    marker = f"…(+{hidden} {'char' if hidden == 1 else 'chars'})"
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
        if hit[1] == "control" or ord(ch) in _BLANK_FILLERS:
            table[ord(ch)] = " "
        else:
            table[ord(ch)] = None
    return text.translate(table) if table else text


# --- mixed scripts -----------------------------------------------------------
#
# UTS #39 (Unicode Security Mechanisms), section 5: a string is single-script
# when the Script_Extensions of its letters, augmented (Han also counts as
# Japanese, Korean and Han-with-Bopomofo; Hiragana and Katakana as Japanese;
# Hangul as Korean; Bopomofo as Han-with-Bopomofo), have a script in common.
# "Highly restrictive" also allows Latin beside one of those CJK writings.
# Script_Extensions come from the Unicode data in the `regex` module, not from
# character names. A compatibility look-alike of a Latin letter (fullwidth Ｐ,
# KELVIN SIGN K, ROMAN NUMERAL ONE Ⅰ, mathematical bold 𝐀: NFKC maps it to one
# Latin letter) counts as a script of its own beside plain Latin, so "Ｐaypal"
# mixes while "ＡＢＣ株式会社" doesn't.

# Every Unicode script (ISO 15924 codes) but Common, Inherited and Unknown, whose
# characters belong to all scripts or none.
_SCRIPT_CODES = tuple(
    """Latn Bopo Grek Copt Cyrl Armn Hebr Arab Syrc Thaa Nkoo Samr Mand Deva Beng Guru Gujr Orya
    Taml Telu Knda Mlym Sinh Thai Laoo Tibt Mymr Geor Hang Ethi Cher Cans Ogam Runr Tglg Hano Buhd
    Tagb Khmr Mong Limb Tale Talu Bugi Lana Bali Sund Batk Lepc Olck Brai Glag Tfng Hani Hira Kana
    Yiii Lisu Vaii Bamu Sylo Phag Saur Kali Rjng Java Cham Tavt Mtei Linb Lyci Cari Ital Goth Perm
    Ugar Xpeo Dsrt Shaw Osma Osge Elba Aghb Vith Todr Lina Cprt Armi Palm Nbat Hatr Phnx Lydi Sidt
    Mero Merc Khar Sarb Narb Mani Avst Prti Phli Phlp Orkh Hung Rohg Gara Yezi Sogo Sogd Ougr Chrs
    Elym Brah Kthi Sora Cakm Mahj Shrd Khoj Mult Sind Gran Tutg Newa Tirh Sidd Modi Takr Ahom Dogr
    Wara Diak Nand Zanb Soyo Pauc Sunu Bhks Marc Gonm Gong Tols Maka Kawi Xsux Pcun Cpmn Egyp Hluw
    Gukh Mroo Tnsa Bass Hmng Krai Medf Berf Miao Tang Nshu Kits Jurc Dupl Sgnw Hmnp Toto Wcho Nagm
    Onao Tayo Mend Adlm""".split()
)
_LATIN_LOOKALIKE = "Latn~"  # pseudo-script: a compatibility form of a Latin letter
_AUGMENTED = {
    "Hani": frozenset({"Hani", "Jpan", "Kore", "Hanb"}),
    "Hira": frozenset({"Hira", "Jpan"}),
    "Kana": frozenset({"Kana", "Jpan"}),
    "Hang": frozenset({"Hang", "Kore"}),
    "Bopo": frozenset({"Bopo", "Hanb"}),
}
_CJK_WRITINGS = frozenset({"Jpan", "Kore", "Hanb"})
_script_patterns: dict[str, regex.Pattern[str]] = {}
_script_cache: dict[str, frozenset[str]] = {}
_shared_sets: dict[frozenset[str], frozenset[str]] = {}
_SCRIPT_CACHE_MAX = 200_000  # more than Unicode's letters
_NO_SCRIPT: frozenset[str] = frozenset()
_LATIN = frozenset({"Latn"})


def _pattern(code: str) -> regex.Pattern[str]:
    pattern = _script_patterns.get(code)
    if pattern is None:
        import regex  # Unicode Script_Extensions (UTS #39); loaded on the first non-ASCII letter

        try:
            pattern = regex.compile(r"\p{Script_Extensions=" + code + "}")
        except regex.error:
            # A script newer than the installed regex's Unicode tables (Pcun and Jurc came with
            # Unicode 17): no letter can be of a script that this Unicode doesn't know.
            pattern = regex.compile(r"[^\s\S]")
        _script_patterns[code] = pattern
    return pattern


def _is_letter(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category[0] == "L" or category == "Nl"


def _learn_scripts(chars: set[str]) -> dict[str, frozenset[str]]:
    """The scripts of `chars`: one C-speed scan of all of them per script, not one
    regex per character. Cached (Unicode has about 140,000 letters; equal sets are
    shared, so the cache stays small)."""
    letters = "".join(sorted(ch for ch in chars if _is_letter(ch)))
    found: dict[str, set[str]] = {ch: set() for ch in letters}
    if letters:
        for code in _SCRIPT_CODES:
            for ch in _pattern(code).findall(letters):
                found[ch].add(code)
    learned: dict[str, frozenset[str]] = {}
    for ch in chars:
        scripts = frozenset(found.get(ch, ()))
        if ch in found:
            folded = unicodedata.normalize("NFKC", ch)
            # KELVIN SIGN and fullwidth Ａ are Latin, mathematical bold 𝐀 and ℓ are Common:
            # all are look-alikes of one plain Latin letter.
            if folded != ch and len(folded) == 1 and folded.isascii() and folded.isalpha():
                scripts = frozenset({_LATIN_LOOKALIKE})
        scripts = _shared_sets.setdefault(scripts, scripts)
        learned[ch] = scripts
        if len(_script_cache) < _SCRIPT_CACHE_MAX:
            _script_cache[ch] = scripts
    return learned


def _scripts_by_char(text: str) -> dict[str, frozenset[str]]:
    """Script_Extensions of every distinct character of `text` (empty for non-letters)."""
    table: dict[str, frozenset[str]] = {}
    unknown: set[str] = set()
    for ch in set(text):
        if ch < "\x80":
            table[ch] = _LATIN if ch.isalpha() else _NO_SCRIPT
            continue
        scripts = _script_cache.get(ch)
        if scripts is None:
            unknown.add(ch)
        else:
            table[ch] = scripts
    if unknown:
        table.update(_learn_scripts(unknown))
    return table


def _sets_in(chars: set[str] | str, table: dict[str, frozenset[str]]) -> list[frozenset[str]]:
    sets = {table[ch] for ch in set(chars)}
    sets.discard(_NO_SCRIPT)
    return list(sets)


def _script_sets(text: str) -> list[frozenset[str]]:
    """The Script_Extensions of each distinct letter of `text` (Common/Inherited left out)."""
    return _sets_in(text, _scripts_by_char(text))


_augmented_cache: dict[frozenset[str], frozenset[str]] = {}


def _augmented(scripts: frozenset[str]) -> frozenset[str]:
    """A letter's scripts, Latin look-alikes as Latin, plus the CJK writings they belong to."""
    result = _augmented_cache.get(scripts)
    if result is None:
        plain = ("Latn" if s == _LATIN_LOOKALIKE else s for s in scripts)
        result = frozenset().union(*(_AUGMENTED.get(s, {s}) for s in plain))
        if len(_augmented_cache) < 4096:
            _augmented_cache[scripts] = result
    return result


def _resolve(sets: list[frozenset[str]]) -> frozenset[str]:
    """UTS #39 resolved script set: what every letter has in common, augmented."""
    common: frozenset[str] | None = None
    for scripts in sets:
        augmented = _augmented(scripts)
        common = augmented if common is None else common & augmented
        if not common:
            return _NO_SCRIPT
    return common or _NO_SCRIPT


def _is_mixed(sets: list[frozenset[str]]) -> bool:
    if len(sets) < 2:
        return False
    if any("Latn" in s for s in sets) and any(_LATIN_LOOKALIKE in s for s in sets):
        return True  # "Ｐaypal": CJK text uses one width or the other, not both in one name
    if _resolve(sets):
        return False
    rest = [
        scripts for scripts in sets if "Latn" not in scripts and _LATIN_LOOKALIKE not in scripts
    ]
    return not (rest and _resolve(rest) & _CJK_WRITINGS)  # Latin beside one CJK writing is fine


def mixed_script(text: str) -> bool:
    """True when letters of `text` come from scripts that don't normally mix (UTS #39).

    For short fields (names, recipients, amounts): "pаypal" with a Cyrillic а,
    "Ｐaypal", "Ⅰnvoice". Digits and punctuation are common to all scripts.
    """
    if not isinstance(text, str) or text.isascii():
        return False
    return _is_mixed(_script_sets(text))


def _mixed_words(text: str) -> Iterator[str]:
    if not isinstance(text, str) or text.isascii():
        return
    table = _scripts_by_char(text)  # once for the whole text, not once per word
    if not _is_mixed(_sets_in(text, table)):
        return
    verdicts: dict[str, bool] = {}  # words repeat; judge each once
    for match in _WORD_RE.finditer(text):
        word = match.group()
        verdict = verdicts.get(word)
        if verdict is None:
            verdict = not word.isascii() and _is_mixed(_sets_in(word, table))
            if len(verdicts) < 65536:
                verdicts[word] = verdict
        if verdict:
            yield word


def mixed_script_words(text: str) -> list[str]:
    """The words of a longer text that mix scripts within themselves."""
    return list(_mixed_words(text))


def has_mixed_script_word(text: str) -> bool:
    """Whether any word of `text` mixes scripts; stops at the first."""
    return next(_mixed_words(text), None) is not None
