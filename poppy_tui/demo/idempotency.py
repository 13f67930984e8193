"""Idempotency-Key reuse (draft-ietf-httpapi-idempotency-key-header, section 2.7): a key sent
again with a different request payload is refused with 422, so a client's bug can't make one key
stand for two requests. At most once itself rests on operation ids (Ops 7), not on keys.

Keys are remembered per client (the caller's owner: its Session, or its account) for a day, at
most MAX_KEYS of them, oldest forgotten first; the draft leaves the expiry to the server.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict

MAX_KEYS = 4096
KEY_LIFETIME_SECONDS = 24 * 3600.0


class IdempotencyKeys:
    def __init__(
        self, lifetime_seconds: float = KEY_LIFETIME_SECONDS, max_keys: int = MAX_KEYS
    ) -> None:
        self.lifetime_seconds = lifetime_seconds
        self.max_keys = max_keys
        self._seen: OrderedDict[tuple[str, str], tuple[str, float]] = OrderedDict()
        self._lock = threading.Lock()

    def same_request(self, owner: str, key: str, method: str, target: str, payload: bytes) -> bool:
        """Whether `key` is new for `owner` or was used for this very request (then True, and it
        is remembered); False when it was used for a different one."""
        fingerprint = hashlib.sha256(
            b"\0".join((method.encode(), target.encode(), payload))
        ).hexdigest()
        now = time.monotonic()
        with self._lock:
            while self._seen:
                oldest, (_, at) = next(iter(self._seen.items()))
                if now - at < self.lifetime_seconds and len(self._seen) < self.max_keys:
                    break
                del self._seen[oldest]
            known = self._seen.get((owner, key))
            if known is not None and now - known[1] < self.lifetime_seconds:
                return known[0] == fingerprint
            self._seen[(owner, key)] = (fingerprint, now)
            return True
