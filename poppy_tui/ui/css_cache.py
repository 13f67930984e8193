"""Parsed CSS kept between runs, like Python's own .pyc files: parsing the same Textual CSS
(Textual's widgets' DEFAULT_CSS and poppy.tcss) took ~10-20 ms of every start before the first
frame (issue #15 target 1), for rules that depend only on the CSS text, the theme's variables
and the Textual and Python that parsed them.

The file holds those (versions and variables) and the rules of each source, keyed by its full
text and place; anything else found there is ignored and the CSS parsed as before. It is
written, owner-only (0600), in the data directory, which only its owner can write (like the
store and the keys), once the first frame is on screen; it is read only if its owner is this
user and nobody else can write it (pickle runs what it loads, exactly as a .pyc does).
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path
from typing import Any

FORMAT = 1
# Keys of rules no longer asked for are dropped when the file holds more than this many.
MAX_SOURCES = 200


def _fingerprint() -> tuple[Any, ...]:
    """The Python and Textual that parsed the rules (textual.__version__ reads package metadata,
    ~15 ms: the parser's files' size and time say as much)."""
    import textual.css.model as model
    import textual.css.parse as parse
    import textual.css.styles as styles

    files = []
    for module in (parse, model, styles):
        stat = os.stat(module.__file__ or "")
        files.append((module.__file__, stat.st_size, stat.st_mtime_ns))
    return (FORMAT, sys.version, tuple(files))


class CssCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._loaded: dict[Any, Any] = {}
        self._new: dict[Any, Any] = {}
        self._used: set[Any] = set()
        self._variables: dict[str, str] | None = None
        self._fingerprint = _fingerprint()

    def load(self, variables: dict[str, str]) -> None:
        """Read the rules parsed with these variables, if the file is ours and theirs."""
        self._variables = dict(variables)
        self._loaded = {}
        try:
            with open(self.path, "rb") as file:
                stat = os.fstat(file.fileno())
                if stat.st_uid != os.getuid() or stat.st_mode & 0o022:
                    return  # someone else could have written it: parse instead
                saved = pickle.load(file)
        except FileNotFoundError:
            return
        except Exception:  # unreadable, truncated, from another version: parse instead
            return
        if (
            isinstance(saved, dict)
            and saved.get("fingerprint") == self._fingerprint
            and saved.get("variables") == self._variables
            and isinstance(saved.get("rules"), dict)
        ):
            self._loaded = saved["rules"]

    def get(self, key: Any, variables: dict[str, str]) -> Any:
        if variables != self._variables:
            self.load(variables)  # a new theme: the file's rules are another theme's
            self._new = {}
        rules = self._loaded.get(key)
        if rules is not None:
            self._used.add(key)
        return rules

    def put(self, key: Any, rules: Any) -> None:
        """Rules just parsed with the variables of the last get()."""
        self._new[key] = rules

    @property
    def changed(self) -> bool:
        return bool(self._new)

    def save(self) -> None:
        """Write the rules used and parsed this run (and others while the file is small)."""
        if not self._new or self._variables is None:
            return
        rules = dict(self._loaded) if len(self._loaded) + len(self._new) <= MAX_SOURCES else {
            key: self._loaded[key] for key in self._used
        }
        rules.update(self._new)
        data = pickle.dumps({"fingerprint": self._fingerprint, "variables": self._variables, "rules": rules},
                            protocol=pickle.HIGHEST_PROTOCOL)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            os.replace(temporary, self.path)  # whole or not at all, for a start running meanwhile
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        self._loaded, self._new = rules, {}
