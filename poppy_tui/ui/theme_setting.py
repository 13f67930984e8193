"""Keep the theme picked in the command palette: write it to config.toml.

tomllib only reads, so the one line is edited in place: the person's comments, order and
other settings stay as they wrote them. No Textual here.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

# A top-level `theme = ...` line (tables come after the top-level keys in TOML).
_THEME_LINE = re.compile(r"^[ \t]*theme[ \t]*=.*$", re.MULTILINE)
_TABLE_HEADER = re.compile(r"^[ \t]*\[", re.MULTILINE)
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,80}$")


def with_theme(text: str, theme: str) -> str:
    """`text` (a config.toml) with its top-level theme set to `theme`."""
    line = f'theme = "{theme}"'
    table = _TABLE_HEADER.search(text)
    top, rest = (text[: table.start()], text[table.start() :]) if table else (text, "")
    if _THEME_LINE.search(top):
        top = _THEME_LINE.sub(line, top, count=1)
    else:
        top = (
            (top.rstrip("\n") + "\n" if top.strip() else "") + line + "\n" + ("\n" if rest else "")
        )
    return top + rest


def save_theme(path: Path, theme: str) -> None:
    """Write atomically, owner-only like the rest of poppy's files. Raises OSError or ValueError."""
    if not _SAFE_NAME.match(theme):
        raise ValueError(f"not a theme name: {theme!r}")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    updated = with_theme(text, theme)
    if updated == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".config-", suffix=".toml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(updated)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
