"""`poppy-tui --demo`: the whole flow in under a minute, with nothing to set up.

It serves the demo Company (Manzanita Outfitters) on 127.0.0.1, makes one real request
through each interface so that three operations wait, and opens the TUI on the inbox.
Everything lives in a demo home of its own, reset on each start, so demo operations
never appear among real ones and approving one can't reach a real Company.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from collections.abc import Awaitable, Callable

from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.cli.context import Context, close_agent, open_agent, require_terminal, run_tui
from poppy_tui.cli.errors import CliError, expected_errors
from poppy_tui.cli.event_loop import run
from poppy_tui.cli.exit_codes import Exit
from poppy_tui.cli.output import note, note_wrapped, safe_line
from datetime import UTC

if TYPE_CHECKING:
    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.store import CompanyRecord

DEMO_FOLDER = "demo"
# Whether plain `poppy-tui --demo` gives the demo Company accounts (sign-in first, then the
# operations belong to the account); `--no-accounts` runs it without, `--accounts` with.
ACCOUNTS_BY_DEFAULT = True


@dataclass(frozen=True)
class DemoRequest:
    label: str
    send: Callable[[Agent, CompanyRecord], Awaitable[Any]]


# One per interface. They ask for three different actions: the demo Company gives one
# action one operation_id whatever the interface, so a second jacket exchange (say, in the
# conversation) would only be a new revision of the first, not a third operation.
DEMO_REQUESTS = (
    DemoRequest(
        "API: POST /api/orders/ord_7Hk2/exchanges (jacket for the insulated one)",
        lambda agent, company: agent.call_api(
            company,
            "POST",
            "/api/orders/ord_7Hk2/exchanges",
            {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
            origin="demo",
        ),
    ),
    DemoRequest(
        "MCP: cancel_subscription (the Trailhead Coffee Club)",
        lambda agent, company: agent.call_tool(
            company, "cancel_subscription", {"subscription_id": "sub_6Tc1"}, origin="demo"
        ),
    ),
    DemoRequest(
        'Conversation: "Could you move my fitting appointment to tomorrow at 2pm?"',
        lambda agent, company: agent.say(
            company, "Could you move my fitting appointment to tomorrow at 2pm?", origin="demo"
        ),
    ),
)


def demo_paths(paths: Paths) -> Paths:
    root = paths.data_dir / DEMO_FOLDER
    return Paths(config_dir=root / "config", data_dir=root / "data")


def demo_config(config: Config) -> Config:
    """The person's look and feel, none of their Companies, and a key kept with the demo data.

    The key file keeps the demo off the real keyring entry: the demo Company never sees
    the agent key real Companies know.
    """
    return replace(config, companies=(), key_storage="file", allow_loopback=True)


def reset_demo_data(paths: Paths) -> None:
    """Each demo starts from a fresh queue: the last demo's Company (and port) is gone."""
    for suffix in ("", "-wal", "-shm"):
        target = paths.database.with_name(paths.database.name + suffix)
        try:
            target.unlink()
        except FileNotFoundError:
            pass


def parse_faults(spec: str | None) -> Any:
    from poppy_tui.demo.faults import Faults

    try:
        return Faults.parse(spec)
    except ValueError as exc:
        raise CliError(f"--faults: {exc}", Exit.USAGE) from None


def _waiting_rows(result: Any) -> list[int]:
    rows = getattr(result, "operation_rows", None)
    if rows is not None:
        return list(rows)
    row = getattr(result, "operation_row", None)
    return [row] if row is not None else []


def _why_none(result: Any) -> str:
    """Say why a request left nothing waiting: e.g. Mediated Sign-In doesn't grant the demo's
    bookings scope, so the fitting move answers with a sign-in challenge."""
    problems = getattr(result, "problems", None) or []
    detail = problems[0] if problems else getattr(result, "detail", "")
    return (
        f"no operation came back ({safe_line(detail, 300)})" if detail else "no operation came back"
    )


@dataclass
class SeedReport:
    """What the TUI must say about the start that its empty inbox can't (demo_notice)."""

    company_id: int | None = None
    sign_in_failed: str | None = (
        None  # why the demo's sign-in failed (its requests went signed out)
    )
    expired: list[int] = field(default_factory=list)  # operations that arrived already expired


async def seed(
    agent: Agent, base_url: str, sign_in: bool = False, report: SeedReport | None = None
) -> list[int]:
    """Register the demo Company (signing in first with `sign_in`) and make the demo
    requests; returns the waiting operations (and fills in `report`)."""
    report = report if report is not None else SeedReport()
    company = await agent.add_company(base_url)
    report.company_id = company.id
    if sign_in:
        from poppy_tui.cli.demo_signin import sign_in_first

        report.sign_in_failed = await sign_in_first(agent, company)
    note("Making requests through each interface:")
    waiting: list[int] = []
    for request in DEMO_REQUESTS:
        try:
            result = await request.send(agent, company)
            rows = _waiting_rows(result)
        except expected_errors() as exc:
            # A fault spec can make a request fail; the demo goes on with what did arrive.
            note(f"  {request.label}")
            note_wrapped(f"→ failed: {safe_line(str(exc), 300)}", indent="    ")
            continue
        expired = [row for row in rows if _already_expired(agent, row)]
        report.expired.extend(expired)
        rows = [row for row in rows if row not in expired]
        waiting.extend(rows)
        outcome = (
            f"operation {', '.join(map(str, rows))} waits for your approval"
            if rows
            else _why_none(result)
        )
        if expired:  # e.g. --faults expired: the TUI shows these in History, not the inbox
            outcome = f"operation {', '.join(map(str, expired))} arrived already expired (it is in History)"
        note(f"  {request.label}")
        note_wrapped(f"→ {outcome}", indent="    ")
    return waiting


def _already_expired(agent: Agent, row: int) -> bool:
    from datetime import datetime

    record = agent.store.get_operation(row)
    return record.status.value == "expired" or record.current.expires_at <= datetime.now(UTC)


def demo_notice(report: SeedReport, waiting: int) -> Any:
    """What the inbox says at its top (ui/screens/inbox_notice.StartNotice): the pre-TUI text is hidden
    behind the TUI, and an empty demo inbox must say why it is empty and what to do."""
    from poppy_tui.safety.wording import count, followed_by
    from poppy_tui.ui.screens.inbox_notice import StartNotice

    parts: list[str] = []
    sign_in_company = None
    if report.sign_in_failed is not None and report.company_id is not None:
        sign_in_company = report.company_id
        parts.append(
            followed_by(
                f"The demo's sign-in failed: {report.sign_in_failed}",
                "its requests went out signed out, so they met sign-in challenges"
                + ("" if waiting else " and nothing waits here"),
            )
        )
    if report.expired:
        parts.append(
            f"{count(len(report.expired), 'demo operation')} arrived already expired (the "
            "'expired' fault), so nothing of them waits here: they are in History (h)."
        )
    if not parts:
        return None
    return StartNotice(" ".join(parts), sign_in_company)


def waiting_line(count: int) -> str:
    """What the demo says before the TUI opens, for how many operations wait."""
    if count == 0:
        return "No operation waits (see above why). Opening the inbox: it says what to do."
    if count == 1:
        return "1 operation waits. Opening the inbox: review it, then approve or decline it."
    return f"{count} operations wait. Opening the inbox: review each, then approve or decline it."


def demo_accounts() -> Any:
    """Accounts for the demo Company. It knows the demo agent the way it knows any agent:
    by fetching the CIMD and JWKS the agent serves on loopback (its development identity)."""
    from poppy_tui.demo.accounts.service import AccountsOptions

    return AccountsOptions()


def accounts_banner() -> list[str]:
    from poppy_tui.demo.accounts.users import DEMO_ONE_TIME_CODE, DEMO_PASSWORD, DEMO_USERNAME

    # Each line fits 80 columns: a line that wraps at 80x24 splits the credentials mid-word.
    return [
        "The demo Company has accounts. Sign in as the demo user:",
        f"  email {DEMO_USERNAME}   password {DEMO_PASSWORD}",
        f"  one-time code (for Mediated Sign-In, typed here) {DEMO_ONE_TIME_CODE}",
        "Browsing works signed out; orders, the subscription and bookings need sign-in.",
    ]


def run_demo(ctx: Context, faults_spec: str | None, accounts: bool | None = None) -> int:
    accounts = ACCOUNTS_BY_DEFAULT if accounts is None else accounts
    faults = parse_faults(faults_spec)
    require_terminal()
    # The person's config file, not the demo's: a theme picked in the demo is theirs to keep.
    demo = Context(demo_paths(ctx.paths), demo_config(ctx.config), ctx.config_file)
    demo.paths.ensure()
    reset_demo_data(demo.paths)
    from poppy_tui.demo.server import start_company

    company = start_company(faults, accounts=demo_accounts() if accounts else None)
    run_record = _mark_running(demo.paths, company.base_url)
    try:
        described = faults.describe()
        note(f"Demo Company Manzanita Outfitters is running at {company.base_url}")
        if described:
            note_wrapped(f"with faults: {described}", indent="  ")
        if accounts:
            for line in accounts_banner():
                note(line)
        note(f"Demo data: {demo.paths.data_dir} (separate from your own; reset on each start)")

        report = SeedReport()

        async def make_requests() -> list[int]:
            agent = open_agent(demo)
            try:
                return await seed(agent, company.base_url, sign_in=accounts, report=report)
            finally:
                await agent.aclose()

        waiting = run(make_requests())
        note_wrapped(waiting_line(len(waiting)), indent="")
        agent = open_agent(demo)
        try:
            run_tui(
                agent,
                "inbox",
                config_file=demo.config_file,
                demo=True,
                notice=demo_notice(report, len(waiting)),
            )
            decided = _what_became_of_decisions(agent)
        finally:
            close_agent(agent)
    finally:
        company.stop()
        _mark_stopped(demo.paths, run_record)
    for line in decided:
        note(line)
    note("Demo Company stopped. Run 'poppy-tui --demo' again for a fresh start.")
    return Exit.OK


def _mark_running(paths: Paths, base_url: str) -> Any:
    """The demo's home says whose it is (agent/demo_marker.py): a reader of it later knows its
    Company stopped, so nothing left there is shown as being sent."""
    import os

    from poppy_tui.agent.demo_marker import DemoRun, write_demo_run
    from poppy_tui.agent.store.connection import stamp

    run = DemoRun(base_url, os.getpid(), stamp())
    try:
        write_demo_run(paths.data_dir, run)
    except OSError:
        return None
    return run


def _mark_stopped(paths: Paths, run: Any) -> None:
    from dataclasses import replace as replaced

    from poppy_tui.agent.demo_marker import write_demo_run
    from poppy_tui.agent.store.connection import stamp

    if run is None:
        return
    try:
        write_demo_run(paths.data_dir, replaced(run, stopped_at=stamp()))
    except OSError:
        pass


def _what_became_of_decisions(agent: Agent) -> list[str]:
    """After the TUI, a line for each operation the person decided (walk K6: after `s`, the
    shell said nothing of what was sent): performed, declined, withdrawn and not sent..."""
    from poppy_tui.agent.store import Status
    from poppy_tui.cli.output import status_text

    try:
        rows = agent.store.list_operations(tuple(Status), limit=1000, newest_first=False)
    except Exception:  # noqa: BLE001 - a summary only: the store keeps the truth
        return []
    lines = []
    for row in rows:
        if row.status == Status.PENDING:
            continue
        record = agent.store.get_operation(row.id)
        if row.status == Status.WITHDRAWN:
            said = "not sent: your approval was withdrawn (quitting without sending it)"
        elif row.status in (Status.APPROVED, Status.SENDING):
            said = "not sent, and never will be: the demo Company has stopped"
        else:
            said = status_text(record)
        lines.append(
            f"operation {record.id} ({safe_line(record.company.name, 60)}, "
            f"{safe_line(record.operation_id, 60)}): {said}"
        )
    return (["What became of your decisions:", *["  " + line for line in lines]]) if lines else []
