"""The demo Company for the round-trip benchmark, in a process of its own.

    python tests/benchmarks/company_process.py   -> prints its base URL, serves until stdin closes

A real Company is not in the Personal Agent's process. Serving it from a thread of the
measuring process would make every client step share the GIL with the server's work (a
socket send would wait for the server thread to hand the GIL back), so the client-side figures
would carry some of the Company's cost. In a process of its own, the Company's work is the same
for both clients and the difference between them is the clients' own.

Each booking change appends a charge and a history entry, and the booking's JSON (the answer to
every change) lists them all; across a hundred benchmark changes the answer would grow to 25 KB.
The benchmark keeps the booking's ledger to its last entry before each request, so every answer
has the size one change of a real booking gets (about 1 KB) for both clients alike.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from poppy_tui.demo.server import start_company

BOOKING_ID = "bkg_2Fm8"


def main() -> int:
    holder: dict = {}

    def keep_ledger_short(app):
        async def trimmed(scope, receive, send):
            company = holder.get("company")
            if company is not None and scope["type"] == "http":
                booking = company.state.bookings[BOOKING_ID]
                del booking.charges[:-1], booking.history[:-1]
            await app(scope, receive, send)

        return trimmed

    company = start_company(wrap=keep_ledger_short)
    holder["company"] = company
    print(company.base_url, flush=True)
    sys.stdin.read()  # the benchmark closes our stdin to stop us
    company.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
