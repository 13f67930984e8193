"""Who is asking: the paired device behind a request (its credential in a `__Host-` cookie), the
per-session CSRF token its forms carry, how long ago it was shown each revision (the arming
delay), and how many pairing attempts the server takes.

The cookie is `__Host-poppy-device`: HttpOnly (no script reads it), SameSite=Strict (no other
site's page sends it), Secure (a browser keeps a `__Host-` cookie only so; it treats loopback as
secure, and anything else is served over TLS), Path=/ and no Domain (this host only). Its value
is the device's credential; the device book keeps only its hash, and a revoked device's
credential is refused at its next request.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict, deque
from typing import Any

COOKIE = "__Host-poppy-device"
# How long a browser keeps the credential (it is refused at once when revoked, whatever this says).
COOKIE_SECONDS = 400 * 86400  # the longest browsers keep a cookie
CSRF_FIELD = "csrf"


def set_device_cookie(response: Any, credential: str) -> None:
    response.set_cookie(
        COOKIE,
        credential,
        max_age=COOKIE_SECONDS,
        path="/",
        secure=True,
        httponly=True,
        samesite="strict",
    )


def clear_device_cookie(response: Any) -> None:
    response.delete_cookie(COOKIE, path="/", secure=True, httponly=True, samesite="strict")


class CsrfTokens:
    """Per-session tokens: an HMAC of the device's credential under a key this server process
    made, so a token is good only for that device, in this run of the server. A page from before
    a restart gets "reload the page" rather than a decision."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def token(self, credential: str) -> str:
        return hmac.new(self._key, credential.encode(), hashlib.sha256).hexdigest()

    def valid(self, credential: str, presented: str | None) -> bool:
        return bool(presented) and hmac.compare_digest(self.token(credential), str(presented))


class ArmingClock:
    """When each device was first shown each revision: approving waits `delay` seconds after it,
    as the TUI's review does (keys typed before the person could read are not a decision)."""

    def __init__(self, delay: float, keep: int = 2000) -> None:
        self.delay = delay
        self._shown: OrderedDict[tuple[int, int, int], float] = OrderedDict()
        self._keep = keep

    def shown(self, device_id: int, operation_row: int, revision_id: int) -> None:
        key = (device_id, operation_row, revision_id)
        if key not in self._shown:
            self._shown[key] = time.monotonic()
            while len(self._shown) > self._keep:
                self._shown.popitem(last=False)

    def left(self, device_id: int, operation_row: int, revision_id: int) -> float:
        """Seconds until approving works; the whole delay for a revision never shown."""
        first = self._shown.get((device_id, operation_row, revision_id))
        if first is None:
            return self.delay
        return max(0.0, first + self.delay - time.monotonic())


class AttemptLimit:
    """At most `count` attempts in any `seconds` (pairing links tried, wrong or used ones): the
    codes are 256 bits, so this keeps a flood from filling the log and the file, not guessing."""

    def __init__(self, count: int, seconds: float) -> None:
        self.count = count
        self.seconds = seconds
        self._at: deque[float] = deque()

    def allow(self) -> bool:
        now = time.monotonic()
        while self._at and now - self._at[0] > self.seconds:
            self._at.popleft()
        if len(self._at) >= self.count:
            return False
        self._at.append(now)
        return True
