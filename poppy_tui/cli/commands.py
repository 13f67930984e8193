"""The commands. stdout carries the result (the Company's answer, or which operations wait);
stderr carries poppy-tui's own commentary, so `poppy-tui call ... | jq` sees only the answer.

Nothing here can approve or decline: those are the person's, in the TUI.
"""

from __future__ import annotations

import json
import re
import sys

from poppy_tui.agent.config_file import SCHEMA_FILE
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.cli.context import (
    Context,
    close_agent,
    config_file_of,
    discover_listed,
    load_context,
    open_agent,
    open_store,
    require_terminal,
    run_tui,
    with_agent,
)
from poppy_tui.cli.errors import CliError
from poppy_tui.cli.exit_codes import REQUEST_EXIT, STATUS_EXIT, Exit, first_failure
from poppy_tui.cli.output import (
    STATUS_TEXT,
    status_text,
    company_block,
    emit,
    emit_json_list,
    indented,
    json_line,
    note,
    record_json,
    row_json,
    row_line,
    safe_block,
    safe_line,
    show_text,
    to_json,
)

# No typing, dataclasses or Config on the path of a command that doesn't use them: each costs a
# short command like `pending` more than its own work (docs/architecture.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from typing import Any
    from collections.abc import Callable

    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.store import CompanyRecord, OperationRecord

_METHOD = r"[A-Za-z]+"


def run(args: argparse.Namespace) -> int:
    if args.command == "locate":
        # Works even when config.toml is broken: that is when people need to find it.
        return cmd_locate(args)
    if args.command == "config":
        # Before the home's config is read: checking a broken one is what it is for.
        from poppy_tui.cli.config_commands import cmd_config

        return cmd_config(args)
    if args.command == "completion":
        from poppy_tui.cli.completion import cmd_completion

        return cmd_completion(args)
    from poppy_tui.cli.home import require_existing_home

    require_existing_home(getattr(args, "home", None))
    ctx = load_context(args)
    if args.demo:
        from poppy_tui.cli.demo import run_demo

        return run_demo(ctx, args.faults, accounts=getattr(args, "accounts", None))
    if args.command is None:
        return open_tui(ctx)
    if args.command == "companies":
        from poppy_tui.cli.companies_commands import run_companies

        return run_companies(ctx, args)
    handlers: dict[str, Callable[[Context, argparse.Namespace], int]] = {
        "call": cmd_call,
        "tool": cmd_tool,
        "say": cmd_say,
        "pending": cmd_pending,
        "history": cmd_history,
        "show": cmd_show,
        "signin": _signin,
        "signout": _signin,
        "identity": _identity,
    }
    if args.command in ("mcp", "send"):
        from poppy_tui.cli import gate

        return gate.HANDLERS[args.command](ctx, args)
    return handlers[args.command](ctx, args)


def _signin(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.cli import signin_commands

    return (
        signin_commands.cmd_signin if args.command == "signin" else signin_commands.cmd_signout
    )(ctx, args)


def _identity(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.cli.identity_commands import cmd_identity

    return cmd_identity(ctx, args)


# ---- the TUI ----------------------------------------------------------------------------------


def open_tui(ctx: Context) -> int:
    from poppy_tui.ui import startup_gc

    require_terminal()
    # No cycle collections until the first frame: see ui/startup_gc.py (a bare start holds them
    # from cli/main.py on). The app releases it once the frame is on screen; this `finally`, if
    # it never gets there.
    startup_gc.hold()
    try:
        from poppy_tui.cli.event_loop import run

        # The whole store opens after the first frame (Agent.store); the inbox reads through agent.reader.
        agent = open_agent(ctx, lazy_store=True)
        try:
            if ctx.config.companies:
                run(discover_listed(agent))
            run_tui(agent, config_file=ctx.config_file)
        finally:
            close_agent(agent)
    finally:
        startup_gc.release()
    return Exit.OK


# ---- helpers ----------------------------------------------------------------------------------


def parse_json_argument(text: str, option: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{option} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            Exit.USAGE,
        ) from None


def need_company(agent: Agent, key: str) -> CompanyRecord:
    from poppy_tui.cli.companies_commands import need_company as named

    return named(agent, key)


def print_answer(value: Any) -> None:
    """A Company's answer on stdout: JSON stays JSON (ASCII-escaped), text is sanitised and indented."""
    if value is None:
        return
    if isinstance(value, str):
        emit(indented(safe_block(value)[0]))
    else:
        emit(to_json(value))


def print_messages(company_name: str, messages: list[Any]) -> None:
    for message in messages:
        text = message.get("text") if isinstance(message, dict) else None
        emit(company_block(company_name, text) if isinstance(text, str) else to_json(message))


def print_final(record: OperationRecord) -> None:
    """The Company's last word on an operation, shaped like the answer to the original command."""
    value = record.outcome
    if record.interface == "api" and isinstance(value, dict) and "body" in value:
        value = value["body"]  # the store keeps status and headers too; `call` prints bodies
    if record.interface == "conversation" and isinstance(value, (dict, list)):
        print_messages(record.company.name, value if isinstance(value, list) else [value])
        return
    print_answer(value)


def announce(record: OperationRecord, stream: Any) -> None:
    emit(f"operation {record.id}: {status_text(record)}", stream)
    emit(
        f"  {safe_line(record.company.name, 60)} ({safe_line(record.operation_id, 60)}): "
        f"{safe_line(record.current.summary, 300)}",
        stream,
    )


def report_final(record: OperationRecord, as_json: bool = False) -> int:
    if record.waiting_sign_in:
        # Approved, kept, and sent again once signed in (before it expires): say what to do.
        note(
            f"operation {record.id}: {safe_line(record.waiting_sign_in, 400)}; run: poppy-tui signin "
            f"{safe_line(record.company.name, 80)!r}"
        )
        return Exit.SIGN_IN_REQUIRED
    if not as_json:
        print_final(record)
    status = record.status.value
    detail = record.outcome_detail
    # In a conversation the Company's own message, just printed, already says what happened.
    printed = record.interface == "conversation" and record.outcome is not None
    said = f" ({safe_line(detail, 400)})" if detail and detail != status and not printed else ""
    note(f"operation {record.id}: {STATUS_TEXT.get(status, status)}{said}")
    return STATUS_EXIT[status]


async def wait_for(
    agent: Agent,
    record: OperationRecord,
    deadline: float | None = None,
    request_id: int | None = None,
) -> OperationRecord:
    """Until the operation settles, or (with a deadline, loop time) until the deadline: then it may still be open."""
    import asyncio

    from poppy_tui.agent.agent import SETTLED

    loop = asyncio.get_running_loop()
    while True:
        left = None if deadline is None else max(0.0, deadline - loop.time())
        # With our request's ID: the outcome of our request only, never another's, even when the
        # Company gave one operation_id to two requests (Ops §3 forbids it; Agent.outcome_for_request).
        record = await agent.wait_for_outcome(record.id, timeout=left, request_id=request_id)
        if (
            record.status in SETTLED
            or record.waiting_sign_in
            or (deadline is not None and loop.time() >= deadline)
        ):
            return record
        if not record.status.is_open:
            continue
        # A resend was answered with new terms: nothing was done, and the person decides again.
        note(
            f"operation {record.id}: the Company answered with new terms; they need your approval too"
        )
        announce(record, sys.stderr)


async def settle(
    agent: Agent,
    rows: list[int],
    wait: bool,
    as_json: bool = False,
    timeout: float | None = None,
    answer: dict[str, Any] | None = None,
    request_id: int | None = None,
) -> int:
    import asyncio

    from poppy_tui.agent.agent import SETTLED

    stored = [agent.store.get_operation(row) for row in rows]
    # As our request's caller must read it: an outcome the Company reached for another request
    # under the same operation_id is not ours to report (Ops 3, Ops 5).
    records = (
        stored if request_id is None else [agent.outcome_for_request(r, request_id) for r in stored]
    )
    stream = sys.stderr if wait or as_json else sys.stdout
    for record, before in zip(records, stored, strict=True):
        announce(record, stream)
        if record is not before and record.outcome_detail:
            note(f"operation {record.id}: {safe_line(record.outcome_detail, 600)}")
        held = agent.store.earlier_in_doubt(record.id) if record.status.is_open else []
        if held:
            from poppy_tui.safety.request_reuse import in_doubt_reason

            note(
                f"operation {record.id} can't be approved yet: {safe_line(in_doubt_reason(held), 1000)}"
            )
    if not wait:
        if as_json:
            emit_request_json(agent, answer, records)
        return first_failure([STATUS_EXIT[r.status.value] for r in records])
    numbers = ", ".join(str(r.id) for r in records)
    note(
        f"waiting for a decision in poppy-tui on operation {numbers}; "
        "Ctrl-C stops waiting (the operation stays queued)"
    )
    deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
    finals = [await wait_for(agent, record, deadline, request_id) for record in records]
    # Still open when the deadline came (an approval kept for sign-in is reported, not timed out).
    late = [r for r in finals if r.status not in SETTLED and not r.waiting_sign_in]
    codes = [report_final(r, as_json) for r in finals if r not in late]
    if as_json:
        emit_request_json(agent, answer, finals, timed_out=bool(late))
    if late:
        note(
            f"gave up waiting after {timeout:g}s: operation {', '.join(str(r.id) for r in late)} stays queued "
            "(see 'poppy-tui pending')"
        )
        return Exit.TIMED_OUT
    return first_failure(codes)


def emit_request_json(
    agent: Agent,
    answer: dict[str, Any] | None,
    records: list[OperationRecord],
    timed_out: bool = False,
) -> None:
    """One JSON object on stdout for `call/tool/say --json` (docs/cli.md)."""
    data = dict(answer or {})
    data["operations"] = [record_json(agent.store, r) for r in records]
    if timed_out:
        data["timed_out"] = True
    emit(to_json(data))


async def finish_request(
    agent: Agent,
    result: Any,
    wait: bool,
    http: bool,
    as_json: bool = False,
    timeout: float | None = None,
) -> int:
    answer = {
        "outcome": result.outcome,
        "http_status": result.status,
        "response": result.body,
        "detail": result.detail,
    }
    if result.outcome == "operation" and result.operation_row is not None:
        return await settle(
            agent, [result.operation_row], wait, as_json, timeout, answer, result.request_id
        )
    if as_json:
        emit_request_json(agent, answer, [])
    else:
        print_answer(result.body)
    if result.outcome == "performed":
        return Exit.OK
    status = f" (HTTP {result.status})" if http and result.status is not None else ""
    detail = f": {safe_line(result.detail, 400)}" if result.detail else ""
    challenge = getattr(result, "challenge", None)
    if challenge is not None and challenge.needs_sign_in:
        note(
            f"not performed{status}{detail}; sign in with 'poppy-tui signin COMPANY', then ask again"
        )
        return Exit.SIGN_IN_REQUIRED
    if result.outcome == "not_performed":
        note(f"not performed{status}{detail}")
    else:
        note(f"outcome unknown{status}{detail}; check with the Company before trying again")
    return REQUEST_EXIT.get(result.outcome, Exit.ERROR)


def check_timeout(args: argparse.Namespace) -> None:
    if getattr(args, "timeout", None) is not None and not args.wait:
        raise CliError("--timeout works only with --wait", Exit.USAGE)


# ---- requests ---------------------------------------------------------------------------------


def cmd_call(ctx: Context, args: argparse.Namespace) -> int:
    if not re.fullmatch(_METHOD, args.method):
        raise CliError(
            f"METHOD must be an HTTP method such as GET or POST, got {args.method!r}", Exit.USAGE
        )
    method = args.method.upper()
    check_timeout(args)
    option = "--json" if args.old_body_spelling else "--body"
    body = parse_json_argument(args.body, option) if args.body is not None else None

    async def work(agent: Agent) -> int:
        company = need_company(agent, args.company)
        result = await agent.call_api(company, method, args.path, body)
        return await finish_request(agent, result, args.wait, True, args.json, args.timeout)

    return with_agent(ctx, work)


def cmd_tool(ctx: Context, args: argparse.Namespace) -> int:
    arguments = parse_json_argument(args.arguments, "--args") if args.arguments is not None else {}
    if not isinstance(arguments, dict):
        raise CliError(
            '--args must be a JSON object, e.g. \'{"subscription_id": "sub_1"}\'', Exit.USAGE
        )
    check_timeout(args)

    async def work(agent: Agent) -> int:
        company = need_company(agent, args.company)
        result = await agent.call_tool(company, args.tool, arguments)
        return await finish_request(agent, result, args.wait, False, args.json, args.timeout)

    return with_agent(ctx, work)


def cmd_say(ctx: Context, args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise CliError("TEXT is empty; say something", Exit.USAGE)
    check_timeout(args)

    async def work(agent: Agent) -> int:
        company = need_company(agent, args.company)
        latest = None if args.new else agent.store.latest_conversation(company.id)
        result = await agent.say(company, args.text, latest[0] if latest else None)
        answer = {
            "conversation": result.conversation_row,
            "conversation_id": result.conversation_id,
            "delivered": result.delivered,
            "messages": result.messages,
            "detail": result.detail,
        }
        if not args.json:
            print_messages(company.name, result.messages)
        for problem in result.problems:
            note(f"note: {safe_line(problem, 400)}")
        needs_sign_in = result.challenge is not None and result.challenge.needs_sign_in
        if not result.delivered:
            if args.json:
                emit_request_json(agent, answer, [])
            raise CliError(
                safe_line(result.detail or "the message was not delivered", 400),
                Exit.SIGN_IN_REQUIRED if needs_sign_in else Exit.ERROR,
            )
        if result.operation_rows:
            return await settle(
                agent,
                list(result.operation_rows),
                args.wait,
                args.json,
                args.timeout,
                answer,
                result.request_id,
            )
        if args.json:
            emit_request_json(agent, answer, [])
        return Exit.SIGN_IN_REQUIRED if needs_sign_in else Exit.OK

    return with_agent(ctx, work)


# ---- the queue --------------------------------------------------------------------------------


def _statuses(values: list[str] | None) -> list[Any] | None:
    from poppy_tui.agent.store import Status

    if not values:
        return None
    chosen = []
    for part in (p.strip() for value in values for p in value.split(",")):
        if not part:
            continue
        try:
            chosen.append(Status(part.lower()))
        except ValueError:
            known = ", ".join(s.value for s in Status)
            raise CliError(f"unknown status {part!r}; use one of {known}", Exit.USAGE) from None
    return chosen


def _print_rows(rows: list[Any], as_json: bool, empty: str) -> None:
    if as_json:
        emit_json_list("operations", [[json_line(row_json(r)) for r in rows]])
    elif not rows:
        note(empty)
    else:
        for row in rows:
            emit(row_line(row))


def cmd_pending(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.agent.store.listing import ListStore
    from poppy_tui.agent.store.status import Status

    unfinished = [s for s in Status if not s.is_final]
    ctx.paths.ensure()
    with ListStore.open(ctx.paths.database) as store:
        # An expiry is a fact about time, not a decision: record it so the list doesn't show stale terms as open.
        store.expire_due()
        if args.json:
            # Written as SQLite reads it (store/row_json.py): 10,000 operations waiting are 6 MB.
            emit_json_list("operations", store.operation_json_lines(unfinished, newest_first=False))
            return Exit.OK
        count = store.count_operations(unfinished)
        rows = store.list_operations(unfinished, limit=max(count, 1), newest_first=False)
    _print_rows(rows, False, "nothing is waiting")
    return Exit.OK


def cmd_history(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.cli import export

    statuses = _statuses(args.status)
    form = args.format or ("json" if args.json else "text")
    if args.json and form != "json":
        raise CliError(f"--json and --format {form} disagree; use one of them", Exit.USAGE)
    since, until = (
        export.parse_when(args.since, "--since"),
        export.parse_when(args.until, "--until"),
    )
    limit = args.limit or (None if form in ("ndjson", "csv") else 50)
    with open_store(ctx) as store:
        company_id = None
        if args.company:
            from poppy_tui.cli.companies_commands import no_such_company

            matches = store.match_companies(args.company)
            if len(matches) != 1:
                raise no_such_company(args.company, matches, store.list_companies())
            company_id = matches[0].id
        store.expire_due()
        rows = export.rows_between(store, statuses, company_id, since, until, limit)
        if form in ("ndjson", "csv"):
            count = (export.write_ndjson if form == "ndjson" else export.write_csv)(store, rows)
            if not count:
                note("no operations")
            return Exit.OK
        shown = list(rows)
    _print_rows(shown, form == "json", "no operations")
    return Exit.OK


def cmd_show(ctx: Context, args: argparse.Namespace) -> int:
    with open_store(ctx) as store:
        store.expire_due()
        record = store.find_operation(args.operation)
        if record is None:
            raise CliError(
                f"no operation {safe_line(args.operation, 100)!r}; see 'poppy-tui history'"
            )
        emit(
            to_json({"operation": record_json(store, record)})
            if args.json
            else show_text(store, record)
        )
    return Exit.OK


def cmd_locate(args: argparse.Namespace) -> int:
    paths = resolve_paths(getattr(args, "home", None))
    where = {
        "config": config_file_of(args, paths),
        "data": paths.data_dir,
        "db": paths.database,
        "log": paths.log_file,
        "schema": SCHEMA_FILE,
    }[args.what]
    emit(to_json({args.what: str(where)}) if getattr(args, "json", False) else str(where))
    return Exit.OK
