"""`poppy-tui companies add|list|refresh|remove`, and how a command names a Company.

A name can mean several Companies (two demo runs on different ports are both "Manzanita
Outfitters"): that is said as ambiguous, with the domains to choose from, never as unknown.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any

from poppy_tui.cli.errors import CliError
from poppy_tui.cli.exit_codes import Exit
from poppy_tui.cli.gate_parser import JSON_HELP, add_company_argument
from poppy_tui.cli.output import company_json, company_line, emit, note, safe_line, to_json

if TYPE_CHECKING:
    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.store import CompanyRecord
    from poppy_tui.cli.context import Context


def company_label(name: Any, domain: Any, max_chars: int) -> Any:
    # Imported here: cli/main.py imports this module to build the parser, and `--help` must not
    # load the sanitiser (and its regex engine) just to print the usage.
    from poppy_tui.safety.company_name import company_label as label

    return label(name, domain, max_chars)


ADD_HINT = "add it with 'poppy-tui companies add DOMAIN'"


def add_parsers(company_commands: Any, global_options: Any) -> None:
    """The refresh and remove actions, beside add and list (cli/main.py builds those)."""
    refresh = company_commands.add_parser(
        "refresh",
        help="fetch a Company's poppy.json again now (all Companies without NAME)",
        description="Ask each Company for its /.well-known/poppy.json again, conditionally (If-None-Match), "
        "whatever its caching headers said, and keep the new one. Requests do this on their own when the "
        "stored copy is older than the Company allowed (at least 1 minute, at most 1 day).",
        allow_abbrev=False,
    )
    global_options(refresh, suppress=True)
    add_company_argument(refresh, "name", metavar="NAME", nargs="?")
    remove = company_commands.add_parser(
        "remove",
        help="forget a Company (its history stays)",
        description="Forget a Company: it leaves 'companies list', the TUI's Company picker and name look-ups. "
        "Its recorded requests, operations and decisions stay in the history. Refused while operations with "
        "it still wait for a decision or an outcome. Adding it again brings it back.",
        allow_abbrev=False,
    )
    global_options(remove, suppress=True)
    add_company_argument(remove, "name", metavar="NAME")
    for parser in (refresh, remove):  # --json means JSON output on every command (docs/cli.md)
        parser.add_argument("--json", action="store_true", help=JSON_HELP)


def company_choices(companies: list[CompanyRecord]) -> str:
    return ", ".join(company_label(c.name, c.domain, 60).text for c in companies)


def no_such_company(key: str, matches: list[CompanyRecord], known: list[CompanyRecord]) -> CliError:
    """The error for a Company name that names none, or more than one."""
    shown = safe_line(key, 100)
    if len(matches) > 1:
        return CliError(
            f"{shown!r} is ambiguous: it matches {len(matches)} Companies, {company_choices(matches)}; "
            "give the domain instead (or remove the stale one with 'poppy-tui companies remove DOMAIN')",
            Exit.USAGE,
        )
    closest = closest_company(key, known)
    if closest is not None:
        label = company_label(closest.name, closest.domain, 60).text
        return CliError(f"unknown company {shown!r}; did you mean {label}?")
    return CliError(
        f"unknown company {shown!r} (known: {company_choices(known) or 'none yet'}); {ADD_HINT}"
    )


def closest_company(key: str, known: list[CompanyRecord]) -> CompanyRecord | None:
    """The known Company whose name or domain is nearest a misspelt `key`, if one is near enough."""
    import difflib

    spellings: dict[str, CompanyRecord] = {}
    for company in known:
        for text in (company.name, company.domain):
            spellings.setdefault(str(text).casefold(), company)
    found = difflib.get_close_matches(key.casefold(), list(spellings), n=1, cutoff=0.75)
    return spellings[found[0]] if found else None


def need_company(agent: Agent, key: str) -> CompanyRecord:
    matches = agent.match_companies(key)
    if len(matches) != 1:
        raise no_such_company(key, matches, agent.store.list_companies())
    return matches[0]


def run_companies(ctx: Context, args: argparse.Namespace) -> int:
    handlers = {"add": cmd_add, "list": cmd_list, "refresh": cmd_refresh, "remove": cmd_remove}
    return handlers[args.companies_command](ctx, args)


def cmd_add(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.cli.context import with_agent
    from poppy_tui.protocol.discovery import discovery_url
    from poppy_tui.protocol.errors import InvalidDiscovery

    try:
        discovery_url(args.target, allow_loopback_http=ctx.config.allow_loopback)
    except InvalidDiscovery as exc:
        about_scheme = "scheme" in exc.reason
        only = (
            " (plain http only for loopback addresses)"
            if ctx.config.allow_loopback and about_scheme
            else ""
        )
        raise CliError(
            f"can't use {safe_line(args.target, 200)!r}: {exc.reason}{only}", Exit.USAGE
        ) from None

    async def work(agent: Agent) -> int:
        company = await agent.add_company(args.target)
        as_json = getattr(args, "json", False)  # --json: poppy_tui/cli/gate_parser.py
        emit(
            to_json({"company": company_json(company)})
            if as_json
            else f"{company.id}  {company_line(company)}"
        )
        if not company.supports_operations:
            note(
                "note: this Company doesn't offer the operations extension v2; "
                "it will ask for approval its own way (for example on its website)"
            )
        return Exit.OK

    return with_agent(ctx, work)


def cmd_list(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.agent.store.sign_ins import list_sign_ins
    from poppy_tui.cli.context import open_store
    from poppy_tui.cli.output import sign_in_json, sign_in_text

    with open_store(ctx) as store:
        companies = store.list_companies()
        sign_ins = list_sign_ins(store)  # who is signed in where (sign-in, spec 5.4)
    if getattr(args, "domains", False):
        # Completion words: a domain is host[:port], so anything else is left out, not escaped.
        emit(
            "\n".join(c.domain for c in companies if re.fullmatch(r"[A-Za-z0-9.:\[\]-]+", c.domain))
        )
    elif args.json:
        emit(
            to_json(
                {
                    "companies": [
                        company_json(c) | {"signed_in": sign_in_json(sign_ins.get(c.id))}
                        for c in companies
                    ]
                }
            )
        )
    elif not companies:
        note(f"no Companies yet; {ADD_HINT.replace('add it', 'add one')}")
    else:
        for company in companies:
            emit(f"{company.id}  {company_line(company)}; {sign_in_text(sign_ins.get(company.id))}")
    return Exit.OK


def cmd_refresh(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.cli.context import with_agent

    async def work(agent: Agent) -> int:
        companies = [need_company(agent, args.name)] if args.name else agent.store.list_companies()
        if not companies:
            note(f"no Companies yet; {ADD_HINT.replace('add it', 'add one')}")
            return Exit.OK
        failed = False
        listed = []
        for company in companies:
            before = company.supports_operations
            refreshed = await agent.refresh_company(company, force=True)
            now = refreshed.company
            if refreshed.problem:
                failed = True
                note(
                    f"{company_label(now.name, now.domain, 60).text}: kept the stored poppy.json: "
                    f"{safe_line(refreshed.problem, 400)}"
                )
                listed.append(
                    {**company_json(now), "refresh": "failed", "problem": refreshed.problem}
                )
                continue
            state = "updated" if refreshed.changed else "unchanged"
            listed.append({**company_json(now), "refresh": state})
            if not args.json:
                emit(f"{now.id}  {state}  {company_line(now)}")
            if before != now.supports_operations:
                note(
                    f"note: {company_label(now.name, now.domain, 60).text} "
                    f"{'now offers' if now.supports_operations else 'no longer offers'} the operations extension v2"
                )
        if args.json:
            emit(to_json({"companies": listed}))
        return Exit.ERROR if failed else Exit.OK

    return with_agent(ctx, work)


def cmd_remove(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.cli.context import with_agent

    async def work(agent: Agent) -> int:
        company = need_company(agent, args.name)
        agent.remove_company(company)
        if args.json:
            emit(to_json({"removed": company_json(company)}))
            return Exit.OK
        emit(
            f"removed {company.id}  {company_label(company.name, company.domain, 80).text}; "
            "its history stays"
        )
        return Exit.OK

    return with_agent(ctx, work)
