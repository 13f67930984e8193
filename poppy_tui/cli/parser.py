"""`poppy-tui`'s argument parser (argparse): every command's arguments, built only for the
command a run uses (build_parser). The entry point (cli/main.py) imports it for every run but a
bare start (`poppy-tui`, `--home`, `--config`: the TUI), which needs no parser.
"""

from __future__ import annotations

import argparse
import os
import sys

from poppy_tui import __version__
from poppy_tui.cli.exit_codes import EPILOG, Exit
from poppy_tui.cli.gate_parser import (
    JSON_HELP,
    add_company_argument,
    add_gate_commands,
    add_history_options,
    add_script_options,
)

# Annotations only: importing typing costs more than all of --help's own work (docs/architecture.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn
    from collections.abc import Collection, Sequence

PROG = "poppy-tui"

_NO_APPROVE_HINT = "poppy-tui has no approve command and no --yes: only a person approves, in the TUI (run poppy-tui)"


def _terminal_columns() -> int:
    """shutil.get_terminal_size().columns, read the same way (COLUMNS, then the terminal, then
    80) without importing shutil, which brings bz2, lzma and zlib: argparse asks on every
    add_argument (it makes a formatter to check each metavar), not only for --help."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ):
        super().__init__(
            prog,
            indent_increment,
            max_help_position,
            _terminal_columns() - 2 if width is None else width,
        )


class _RawFormatter(_Formatter, argparse.RawDescriptionHelpFormatter):
    """Keeps the epilog's table (and the top description's lines) as written."""


class _Parser(argparse.ArgumentParser):
    # A command's description is wrapped only when its help is shown (textwrap is not loaded otherwise).
    wrap_description = False

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def format_help(self) -> str:
        if self.wrap_description and self.description:
            import shutil
            import textwrap

            # To the terminal (as argparse fills the options), at most 88: a fixed 88 broke every
            # line of a description again at 80 columns.
            width = min(88, max(40, shutil.get_terminal_size().columns - 2))
            self.description = textwrap.fill(self.description, width)
            self.wrap_description = False
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        # One line rather than argparse's usage block: agents read stderr too.
        hint = ""
        if "'approve'" in message or "--yes" in message or "'-y'" in message or " -y" in message:
            hint = f"; {_NO_APPROVE_HINT}"
        hint = hint or _closest_choice(message)
        print(f"{self.prog}: {message}{hint} (see '{self.prog} --help')", file=sys.stderr)
        raise SystemExit(Exit.USAGE)


def _closest_choice(message: str) -> str:
    """'; did you mean 'pending'?' for argparse's "invalid choice: 'pendng' (choose from ...)"."""
    import difflib
    import re

    found = re.match(r"argument [^:]+: invalid choice: '(.*)' \(choose from (.*)\)$", message)
    if not found:
        return ""
    choices = re.findall(r"'([^']*)'", found.group(2))
    close = difflib.get_close_matches(found.group(1), choices, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def _global_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    # Repeated on every subcommand with SUPPRESS defaults so `poppy-tui pending --home X`
    # works as well as `poppy-tui --home X pending`, without one hiding the other.
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--home",
        metavar="PATH",
        default=default,
        help="keep config and data under PATH (default: $POPPY_TUI_HOME, else the platform's folders)",
    )
    parser.add_argument(
        "--config",
        metavar="PATH",
        default=default,
        help="read settings from this TOML file instead of the home's config.toml",
    )


class _Unbuilt:
    """Stands in for the parser of a command this run doesn't use. argparse still lists the
    command (its name and help come from add_parser), but neither its parser nor its arguments
    are built: most of `--help`'s time went to building every command's (build_parser says why)."""

    required = False

    def parse_known_args(self, *args: object, **kwargs: object) -> NoReturn:
        raise RuntimeError(
            "this command's parser was not built: build_parser(argv) was given other arguments"
        )

    def add_argument(self, *args: object, **kwargs: object) -> None:
        return None

    def add_subparsers(self, *args: object, **kwargs: object) -> _Unbuilt:
        return self

    def add_parser(self, *args: object, **kwargs: object) -> _Unbuilt:
        return self

    def add_mutually_exclusive_group(self, *args: object, **kwargs: object) -> _Unbuilt:
        return self

    def add_argument_group(self, *args: object, **kwargs: object) -> _Unbuilt:
        return self

    def set_defaults(self, **kwargs: object) -> None:
        return None


def _command_parser(
    *, unbuilt: bool = False, **kwargs: object
) -> argparse.ArgumentParser | _Unbuilt:
    """The subparsers' parser_class: a real parser, or for `unbuilt=True` only a stand-in."""
    return _Unbuilt() if unbuilt else _Parser(**kwargs)


def command_word(argv: Sequence[str], value_options: Collection[str]) -> str | None:
    """The command `argv` runs ("" for none: the TUI, --help, --version), or None when that can't
    be told without argparse (then every command's parser is built). `value_options` are the
    top-level options that take a value: the word after one is not the command."""
    takes_value = False
    for token in argv:
        if takes_value:
            takes_value = False
        elif token == "--":
            return None
        elif token in value_options:
            takes_value = True
        elif not token.startswith("-"):
            return token
    return ""


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser; given `argv`, only the parser of the command it runs is built in full
    (the others are listed with their help, which is all `--help` shows of them), so a command
    doesn't pay for building the arguments of a dozen others. Parsing gives the same result."""
    parser = _Parser(
        prog=PROG,
        description=(
            "A terminal Personal Agent for Poppy's operations extension v2.\n\n"
            "Without a command it opens the TUI, where a person reviews what Companies ask\n"
            "to do and approves or declines it. Commands make requests for agents and\n"
            "scripts; the operations they get back wait in the same queue for that person."
        ),
        epilog=EPILOG,
        formatter_class=_RawFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    _global_options(parser, suppress=False)
    parser.add_argument(
        "--demo",
        action="store_true",
        help="start the demo Company on 127.0.0.1, make a few requests so operations wait, open the TUI "
        "(separate demo data; reset on each start)",
    )
    parser.add_argument(
        "--faults",
        metavar="SPEC",
        help="with --demo: make the demo Company misbehave, e.g. 'slow=1.5,busy=2,hostile' (see docs/cli.md)",
    )
    demo_accounts = parser.add_mutually_exclusive_group()
    demo_accounts.add_argument(
        "--accounts",
        dest="accounts",
        action="store_const",
        const=True,
        help="with --demo (the default): give the demo Company accounts and sign-in first; it prints the "
        "demo user's credentials (see docs/demo-company.md)",
    )
    demo_accounts.add_argument(
        "--no-accounts",
        dest="accounts",
        action="store_const",
        const=False,
        help="with --demo: no accounts and no sign-in; the requests go signed out",
    )
    # Read from the parser itself, so an option added above is never mistaken for the command.
    value_options = {o for a in parser._actions if a.nargs != 0 for o in a.option_strings}
    wanted = None if argv is None else command_word(argv, value_options)
    # argparse only calls parser_class; typeshed wants a class, this is a function.
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_command_parser
    )  # type: ignore[call-overload]

    def command(
        name: str, help_text: str, description: str | None = None
    ) -> argparse.ArgumentParser:
        if wanted is not None and name != wanted:
            return commands.add_parser(name, help=help_text, unbuilt=True)
        sub = commands.add_parser(
            name,
            help=help_text,
            description=description or help_text,
            epilog=EPILOG,
            formatter_class=_RawFormatter,
            allow_abbrev=False,
        )
        # The raw formatter keeps the epilog's table; the prose still wants wrapping (format_help).
        sub.wrap_description = True
        _global_options(sub, suppress=True)
        return sub

    companies = command("companies", "add, list, refresh or remove Companies")
    company_commands = companies.add_subparsers(
        dest="companies_command", metavar="ACTION", parser_class=_Parser
    )
    company_commands.required = True
    add = company_commands.add_parser(
        "add",
        help="discover a Company from its domain or URL and remember it",
        description="Fetch DOMAIN's /.well-known/poppy.json and remember the Company. HTTPS only; plain "
        "http only for loopback addresses (127.0.0.1, ::1, localhost).",
        allow_abbrev=False,
    )
    _global_options(add, suppress=True)
    add.add_argument(
        "target", metavar="DOMAIN_OR_URL", help="e.g. shop.example or https://shop.example"
    )
    listing = company_commands.add_parser(
        "list", help="list the Companies poppy-tui knows", allow_abbrev=False
    )
    _global_options(listing, suppress=True)
    listing.add_argument("--json", action="store_true", help=JSON_HELP)
    # For shell completion (`poppy-tui completion`): the known domains, one a line.
    listing.add_argument("--domains", action="store_true", help=argparse.SUPPRESS)
    if not isinstance(companies, _Unbuilt):
        from poppy_tui.cli.companies_commands import add_parsers as add_company_parsers

        add_company_parsers(company_commands, _global_options)

    wait_help = (
        "if an operation comes back, wait until a person decides in the TUI and it is settled, "
        "then print the Company's final response"
    )
    call = command(
        "call",
        "make an API request to a Company",
        "Send METHOD PATH to the Company's API. If the Company asks for approval, the operation is queued, its "
        "number printed, and poppy-tui exits 3: open poppy-tui to review it.",
    )
    add_company_argument(call, "company")
    call.add_argument("method", metavar="METHOD", help="HTTP method, e.g. GET or POST")
    call.add_argument(
        "path",
        metavar="PATH",
        help="path on the Company's API (e.g. /api/orders) or a full URL there",
    )
    call.add_argument(
        "--body", dest="body", metavar="BODY", help="JSON request body (formerly --json BODY)"
    )
    call.add_argument("--wait", action="store_true", help=wait_help)

    tool = command(
        "tool",
        "call a tool on a Company's MCP server",
        "Call TOOL on the Company's MCP server. An operation is queued and exits 3, as for call.",
    )
    add_company_argument(tool, "company")
    tool.add_argument("tool", metavar="TOOL", help="tool name, e.g. cancel_subscription")
    tool.add_argument(
        "--args", dest="arguments", metavar="JSON", help="tool arguments as a JSON object"
    )
    tool.add_argument("--wait", action="store_true", help=wait_help)

    say = command(
        "say",
        "send a message in a conversation with a Company's agent",
        "Send TEXT to the Company's agent and print its answer. It continues the latest conversation with "
        "that Company (the TUI's too), so 'size L instead' follows on; --new starts another. Operations "
        "it proposes are queued and exit 3, as for call.",
    )
    add_company_argument(say, "company")
    say.add_argument("text", metavar="TEXT", help="the message")
    say.add_argument(
        "--new",
        action="store_true",
        help="start a new conversation instead of continuing the latest",
    )
    say.add_argument("--wait", action="store_true", help=wait_help)

    pending = command(
        "pending",
        "list operations not finished yet",
        "List operations that aren't finished: waiting for a decision, approved and being sent, or with an "
        "unknown outcome. Oldest first.",
    )
    pending.add_argument("--json", action="store_true", help=JSON_HELP)

    history = command("history", "list operations, newest first")
    history.add_argument("--json", action="store_true", help=JSON_HELP)
    history.add_argument(
        "--status",
        action="append",
        metavar="S",
        help="only this status (repeatable, or comma-separated): pending, withdrawn, approved, sending, "
        "performed, not_performed, outcome_unknown, declined, expired",
    )
    history.add_argument("--company", metavar="C", help="only this Company (name, domain or URL)")
    history.add_argument(
        "--limit",
        type=_positive_int,
        default=None,
        metavar="N",
        help="at most N (default 50; ndjson and csv: all)",
    )
    add_history_options(history)

    show = command(
        "show",
        "show one operation's full record as plain text",
        "Show everything recorded about one operation, as labelled plain text (no tables; suits screen "
        "readers). OPERATION is its number, or the Company's operation_id.",
    )
    show.add_argument(
        "operation", metavar="OPERATION", help="operation number (from pending) or operation_id"
    )
    show.add_argument("--json", action="store_true", help=JSON_HELP)

    add_script_options(call, tool, say, add, wait_help)
    add_gate_commands(command, _global_options)

    locate = command("locate", "print where poppy-tui keeps its files")
    locate.add_argument(
        "what",
        choices=("config", "data", "db", "log", "schema"),
        help="config: the config file; data: the data folder; db: the database; log: the log "
        "file; schema: config.toml's JSON Schema",
    )
    from poppy_tui.cli.account_parsers import add_identity_commands, add_signin_commands

    add_signin_commands(command)
    add_identity_commands(command)
    locate.add_argument("--json", action="store_true", help=JSON_HELP)
    config = command("config", "check a config file")
    config_commands = config.add_subparsers(
        dest="config_command", metavar="ACTION", parser_class=_Parser
    )
    config_commands.required = True
    check = config_commands.add_parser(
        "check",
        help="say whether a config file is valid, or what is wrong and on which line",
        allow_abbrev=False,
    )
    _global_options(check, suppress=True)
    check.add_argument(
        "path", metavar="PATH", nargs="?", help="the file (default: the one poppy-tui reads)"
    )
    check.add_argument("--json", action="store_true", help=JSON_HELP)
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value
