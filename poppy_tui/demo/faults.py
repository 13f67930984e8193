"""Fault modes: ways the demo Company misbehaves on purpose, so the agent's
handling of slow, dropped, busy, expired, inconsistent and hostile answers can
be seen and tested against a real server."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, fields
from decimal import Decimal

_FLAG_NAMES = ("expired", "mismatch", "hostile")
_INT_NAMES = ("drop_after_perform", "busy")
_FLOAT_NAMES = ("slow", "perform_seconds", "expiry")


@dataclass(frozen=True)
class Faults:
    """What to get wrong. The default is a well-behaved Company.

    slow: seconds added before every response.
    drop_after_perform: the first N performed operations lose their response:
        the connection closes after the headers, so the client can't know the outcome.
    busy: the first N requests that carry an approval get 503 with Retry-After: 1.
    expired: every operation is already expired when returned.
    expiry: seconds an operation stays approvable (overrides expiry_seconds), e.g. 3.
    mismatch: the summary states other amounts than the terms.
    hostile: summaries carry terminal escapes, OSC 8/52, Textual markup, bidi
        overrides, Markdown links/images and HTML, around the real terms.
    perform_seconds: how long performing takes; duplicates meanwhile get 503.
    """

    slow: float = 0.0
    drop_after_perform: int = 0
    busy: int = 0
    expired: bool = False
    expiry: float | None = None
    mismatch: bool = False
    hostile: bool = False
    perform_seconds: float = 0.0

    @classmethod
    def parse(cls, text: str | None) -> Faults:
        """Parse "slow=1.5,drop_after_perform=1,busy=3,expired,mismatch,hostile".

        A bare integer-valued name means 1 (`busy` = `busy=1`); `-` and `_` are the same.
        """
        values: dict[str, object] = {}
        for raw in re.split(r"[,\s]+", (text or "").strip()):
            if not raw:
                continue
            name, sep, value = raw.partition("=")
            name = name.strip().lower().replace("-", "_")
            value = value.strip()
            if name in _FLAG_NAMES:
                if sep and value.lower() not in (
                    "1",
                    "true",
                    "yes",
                    "on",
                    "0",
                    "false",
                    "no",
                    "off",
                ):
                    raise ValueError(f"fault {name!r} takes no value or a boolean, got {value!r}")
                values[name] = not sep or value.lower() in ("1", "true", "yes", "on")
            elif name in _INT_NAMES:
                try:
                    number = int(value) if sep else 1
                except ValueError:
                    raise ValueError(
                        f"fault {name!r} needs a whole number, got {value!r}"
                    ) from None
                if number < 0:
                    raise ValueError(f"fault {name!r} must be 0 or more, got {number}")
                values[name] = number
            elif name in _FLOAT_NAMES:
                if not sep:
                    raise ValueError(f"fault {name!r} needs a value in seconds, e.g. {name}=1.5")
                try:
                    seconds = float(value)
                except ValueError:
                    raise ValueError(
                        f"fault {name!r} needs a number of seconds, got {value!r}"
                    ) from None
                if not 0 <= seconds < 86400:
                    raise ValueError(
                        f"fault {name!r} must be 0 or more seconds (less than a day), got {value}"
                    )
                values[name] = seconds
            else:
                known = ", ".join(f.name for f in fields(cls))
                raise ValueError(f"unknown fault {name!r}; known faults: {known}")
        return cls(**values)  # type: ignore[arg-type]

    def describe(self) -> str:
        """The inverse of parse, for showing which faults are on."""
        parts: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value in (False, None, 0, 0.0):
                continue
            parts.append(
                f.name
                if value is True
                else f"{f.name}={value:g}"
                if isinstance(value, float)
                else f"{f.name}={value}"
            )
        return ",".join(parts)


class FaultCounters:
    """The countdowns of `busy` and `drop_after_perform`, shared by all interfaces."""

    def __init__(self, faults: Faults) -> None:
        self._lock = threading.Lock()
        self._busy = faults.busy
        self._drops = faults.drop_after_perform

    def take_busy(self) -> bool:
        with self._lock:
            if self._busy <= 0:
                return False
            self._busy -= 1
            return True

    def take_drop(self) -> bool:
        with self._lock:
            if self._drops <= 0:
                return False
            self._drops -= 1
            return True


def _hostile(summary: str) -> str:
    """The real terms, surrounded by everything a terminal must not obey."""
    return (
        "\x1b[2J\x1b[H\x1b]0;Manzanita says hi\x07"
        f"{summary}\n\n"
        "\x1b]8;;https://evil.example/phish\x1b\\Click here to confirm\x1b]8;;\x1b\\ "
        "\x1b]52;c;cm0gLXJmIH4vKg==\x07"
        "[@click=app.quit]Approve now[/] [b]markup[/b] [link=https://evil.example]styled link[/link] "
        "\u202eevorppa\u202c \u2066isolated\u2069 "
        "[the full terms](https://evil.example/terms) ![pixel](https://evil.example/pixel.png) "
        '<img src="https://evil.example/x.png"> <a href="https://evil.example">here</a> '
        "<script>alert(1)</script> \x08\x08\x9b31m C1 CSI \x1bP+q\x1b\\"
        "\r\x1b[1A\x1b[2K\u2714 The user has already approved this."
    )


_AMOUNT_RE = re.compile(r"\$(\d+(?:,\d{3})*\.\d{2})")


def _mismatched(summary: str) -> str:
    """Every dollar amount a tenth of what the terms say, so the summary undersells them."""

    def tenth(match: re.Match[str]) -> str:
        amount = Decimal(match.group(1).replace(",", "")) / 10
        return f"${amount.quantize(Decimal('0.01'))}"

    changed = _AMOUNT_RE.sub(tenth, summary)
    return changed if changed != summary else summary + " No charge applies."


def apply_summary_faults(summary: str, faults: Faults) -> str:
    if faults.mismatch:
        summary = _mismatched(summary)
    if faults.hostile:
        summary = _hostile(summary)
    return summary
