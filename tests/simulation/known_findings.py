"""Findings of the simulation that are still open, each being fixed by its owner.

The simulation lets a broken invariant through only when it is exactly one of these (each
invariant check names the finding its failure matches), so everything else still fails the run;
test_findings.py replays each open one as a strict xfail. When a finding is fixed, its xfail
starts to pass (XPASS fails the run): delete the entry here and the marker there, and the test
stays as a plain regression test.

Fixed so far (their tests in test_findings.py are plain regression tests now): A52, an approval
of new terms given after the retry window never sent (life, the lifecycle's revision timers);
A51, the same words in another conversation held as the same action (holds, the typed action
key); and unknown-account, an account's approval sent with another account's token after a
sign-in that names no account (holds, the account hold); reassigned-account, an account's
approved operation returned to another named account and then sent with that one's token
(agent/store/operations.py: whose it is changes only while no approval of it is under way);
and vouched-sign-in-stamp, the person's word for one sign-in taken for another stamped the same
(agent/store/sign_ins.py: each sign-in's stamp is later than every one its Company had). None
is open.

`POPPY_SIM_STRICT=1` tolerates none of them, `POPPY_SIM_STRICT=A51` not that one: the simulation
then fails on the first it meets (how it was shown to find them on the code before the fixes,
docs/development.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownFinding:
    key: str
    area: str  # who is fixing it
    what: str


# Open findings by key, each KnownFinding(key, area, what).
KNOWN_FINDINGS: dict[str, KnownFinding] = {}


def strict(key: str) -> bool:
    """Whether the finding `key` fails the run now: POPPY_SIM_STRICT=1 (all of them), or a
    comma-separated list of keys (those), e.g. POPPY_SIM_STRICT=A51."""
    value = os.environ.get("POPPY_SIM_STRICT", "").strip()
    if value in ("", "0"):
        return False
    return value == "1" or key in {k.strip() for k in value.split(",")}


class InvariantBroken(AssertionError):
    """An invariant the simulation checks is broken; `key` names the finding it matches, if any."""

    key: str | None = None


_BROKEN: dict[str | None, type[InvariantBroken]] = {None: InvariantBroken}


def broken_error(key: str | None) -> type[InvariantBroken]:
    """The exception a break matching finding `key` raises (so a strict xfail can name it)."""
    if key not in _BROKEN:
        name = "Broken" + "".join(part.capitalize() for part in str(key).split("-"))
        _BROKEN[key] = type(name, (InvariantBroken,), {"key": key})
    return _BROKEN[key]


class Findings:
    """What one simulated world broke: a finding still open is noted, anything else fails now."""

    def __init__(self) -> None:
        self.noted: dict[str, str] = {}

    def broken(self, key: str | None, message: str) -> None:
        if key is not None and key in KNOWN_FINDINGS and not strict(key):
            self.noted.setdefault(key, message)
            return
        label = f"[{key}] " if key else ""
        raise broken_error(key)(f"{label}{message}")
