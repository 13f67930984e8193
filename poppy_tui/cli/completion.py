"""`poppy-tui completion bash|zsh|fish`: a completion script generated from the parser itself
(shtab), so it never falls behind a new command or option. Printed on stdout to redirect into
the shell's completion folder (docs/cli.md)."""

from __future__ import annotations

import argparse

from poppy_tui.cli.exit_codes import Exit
from poppy_tui.cli.output import emit


def completion_script(shell: str) -> str:
    import shtab

    from poppy_tui.cli.parser import build_parser

    return shtab.complete(build_parser(), shell=shell)


def cmd_completion(args: argparse.Namespace) -> int:
    emit(completion_script(args.shell).rstrip("\n"))
    return Exit.OK
