"""`poppy-tui`: the entry point. Parses arguments and maps every expected failure to one
clear line on stderr and a documented exit code (poppy_tui.cli.exit_codes).

Only our own light modules load here, so `--help` and `--version` never pay for Textual, mcp or
httpx2; each command imports what it needs when it runs. The parser (cli/parser.py, argparse) is
built for every run but a bare start of the TUI (`bare_start`), whose only options need none.
"""

from __future__ import annotations

import sys

from poppy_tui.cli.errors import CliError, expected_errors
from poppy_tui.cli.exit_codes import Exit

# Annotations only: importing typing costs more than all of --help's own work (docs/architecture.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from collections.abc import Sequence

PROG = "poppy-tui"

# A bare start's options: each takes a value (`--home PATH` or `--home=PATH`).
_BARE_OPTIONS = ("--home", "--config")


def bare_start(argv: Sequence[str]) -> Any:
    """What argparse makes of `argv` when it only starts the TUI (`poppy-tui`, with `--home PATH`
    and `--config PATH` in either spelling, repeated or not: the last one counts), else None.
    argparse and building the parser were ~5 ms of the TUI's first frame (the first-frame target,
    docs/benchmarks.md); anything else, odd or not (a command, --help, a value that looks like an
    option, `--`), goes to the parser, which also says what is wrong. tests/cli checks both give
    the same values."""
    values: dict[str, str | None] = {"home": None, "config": None}
    index = 0
    while index < len(argv):
        token = argv[index]
        name, equals, value = token.partition("=")
        if name not in _BARE_OPTIONS:
            return None
        if not equals:
            if index + 1 >= len(argv):
                return None
            value = argv[index + 1]
            if value.startswith("-"):  # argparse reads it as an option (or refuses it)
                return None
            index += 1
        values[name[2:]] = value
        index += 1
    from types import SimpleNamespace

    return SimpleNamespace(
        home=values["home"],
        config=values["config"],
        demo=False,
        faults=None,
        accounts=None,
        command=None,
    )


def _report(exc: BaseException) -> int:
    from poppy_tui.agent.config import ConfigError
    from poppy_tui.cli.output import safe_line

    code = getattr(exc, "code", None) if isinstance(exc, CliError) else None
    challenge = getattr(exc, "challenge", None)  # AgentError: the Company asked for sign-in
    if code is None and challenge is not None and getattr(challenge, "needs_sign_in", False):
        code = Exit.SIGN_IN_REQUIRED
    if code is None:
        code = Exit.USAGE if isinstance(exc, ConfigError) else Exit.ERROR
    message = str(exc) or type(exc).__name__
    if (
        isinstance(exc, OSError) and exc.strerror
    ):  # "[Errno 2] ...: '/proc/config'" reads as a crash
        where = exc.filename if exc.filename is not None else ""
        message = f"can't use {where}: {exc.strerror}" if where else exc.strerror
    # Error text can quote a Company (a name, a reason): it gets the same treatment as any Company text.
    print(f"{PROG}: {safe_line(message, 1000)}", file=sys.stderr)
    return int(code)


def parse(arguments: list[str]) -> Any:
    """The parsed arguments; argparse's SystemExit (--help, --version, a usage error) goes on."""
    from poppy_tui.cli.gate_parser import rewrite_deprecated
    from poppy_tui.cli.parser import build_parser

    arguments = rewrite_deprecated(arguments)
    parser = build_parser(arguments)
    args = parser.parse_args(arguments)
    if args.faults is not None and not args.demo:
        parser.error("--faults works only with --demo")
    if args.accounts is not None and not args.demo:
        parser.error(f"--{'' if args.accounts else 'no-'}accounts works only with --demo")
    if args.demo and args.command:
        parser.error("--demo opens the TUI; it can't be combined with a command")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = bare_start(arguments)
    if args is not None:
        # The TUI: no cycle collections until its first frame (ui/startup_gc.py), from here on, so
        # also not while the CLI and asyncio are imported (24 collections, ~7-10 ms of the frame).
        from poppy_tui.ui import startup_gc

        startup_gc.hold()
        try:
            return _run(args)
        finally:
            startup_gc.release(freeze=False)  # if the TUI never started (no terminal, no such home)
    try:
        # argparse exits for --help, --version and usage errors; callers of main() get the code instead.
        args = parse(arguments)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else Exit.USAGE
    return _run(args)


def _run(args: Any) -> int:
    try:
        from poppy_tui.cli import commands

        return int(commands.run(args))
    except CliError as exc:
        return _report(exc)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; anything queued stays in the queue", file=sys.stderr)
        return int(Exit.INTERRUPTED)
    except expected_errors() as exc:  # evaluated only once something was raised
        return _report(exc)
    except Exception as exc:  # noqa: BLE001 - logged with its traceback (_report_unexpected), or raised again
        return _report_unexpected(exc)


def _report_unexpected(exc: Exception) -> int:
    """A failure of ours: its traceback to the log, one line naming the log to the terminal. A
    command that opened no log (it talked to no Company) raises it as it is."""
    logfile = sys.modules.get("poppy_tui.agent.logfile")
    where = logfile.where() if logfile is not None else ""
    if not where:
        raise exc
    import logging

    logging.getLogger(__name__).error("poppy-tui failed", exc_info=exc)
    from poppy_tui.cli.output import safe_line

    said = safe_line(f"{type(exc).__name__}: {exc}", 500)
    print(f"{PROG}: poppy-tui failed ({said}). {where}", file=sys.stderr)
    return int(Exit.ERROR)


if __name__ == "__main__":
    raise SystemExit(main())
