"""A Company's answer held until the test lets it go: for races between a request in flight and
what the agent does meanwhile (a token refreshed while the Company has not answered yet).

The Company's handler awaits the hold before it looks at the request's token; the test waits for
`held` (the request has arrived), does what it races, then sets `release`. No timing involved.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

# Only a test that never releases waits this long: the handler then answers anyway.
LONGEST_HOLD_SECONDS = 30.0


@dataclass
class Hold:
    held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    async def __call__(self) -> None:
        """In the Company's handler (its own thread and loop): say it arrived, wait to go on."""
        self.held.set()
        await asyncio.to_thread(self.release.wait, LONGEST_HOLD_SECONDS)

    async def arrived(self) -> None:
        """In the test: until the held request has reached the Company."""
        assert await asyncio.to_thread(self.held.wait, LONGEST_HOLD_SECONDS), (
            "the request never reached the Company"
        )
