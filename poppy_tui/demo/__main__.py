"""`python -m poppy_tui.demo`: serve the demo Company until Ctrl-C (for trying it by hand)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from poppy_tui.demo.accounts.service import AccountsOptions
from poppy_tui.demo.accounts.users import DEMO_ONE_TIME_CODE, DEMO_PASSWORD, DEMO_USERNAME
from poppy_tui.demo.faults import Faults
from poppy_tui.demo.server import serve_company


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m poppy_tui.demo", description="Serve Manzanita Outfitters on 127.0.0.1."
    )
    parser.add_argument("--port", type=int, default=0, help="port (default: any free port)")
    parser.add_argument(
        "--faults",
        default="",
        help='e.g. "slow=1.5,drop_after_perform=1,busy=3,expired,mismatch,hostile"',
    )
    parser.add_argument(
        "--expiry", type=int, default=900, help="seconds an operation can be approved (default 900)"
    )
    parser.add_argument(
        "--extension",
        default="2",
        help='operations version poppy.json lists: "2", another major, or "none"',
    )
    parser.add_argument(
        "--accounts",
        action="store_true",
        help="accounts and sign-in (prints the demo user's credentials)",
    )
    parser.add_argument(
        "--ledger",
        default=None,
        help="SQLite file recording performed operations (kept across restarts)",
    )
    args = parser.parse_args(argv)
    try:
        faults = Faults.parse(args.faults)
    except ValueError as exc:
        parser.error(str(exc))
    extension = None if args.extension.lower() == "none" else args.extension

    async def run() -> None:
        async with serve_company(
            faults,
            port=args.port,
            expiry_seconds=args.expiry,
            extension_version=extension,
            ledger_path=args.ledger,
            accounts=AccountsOptions() if args.accounts else None,
        ) as company:
            print(f"Manzanita Outfitters is open at {company.base_url}", flush=True)
            print(f"  discovery: {company.discovery_url}", flush=True)
            if company.accounts is not None:
                print(
                    f"  sign in as {DEMO_USERNAME} / {DEMO_PASSWORD} (one-time code {DEMO_ONE_TIME_CODE})",
                    flush=True,
                )
            if faults != Faults():
                print(f"  faults: {faults.describe()}", flush=True)
            await asyncio.Event().wait()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
