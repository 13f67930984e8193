"""What every command gets (`Context`: the paths, the config file and its checked settings) and
how commands open what they use: the store, the agent, the TUI. The command modules import
this; commands.py (which runs each command) imports them, never the other way round."""

from __future__ import annotations

import sys
from pathlib import Path

from poppy_tui.agent.config_file import ConfigError, read_settings
from poppy_tui.agent.paths import Paths, resolve_paths
from poppy_tui.cli.errors import CliError, expected_errors
from poppy_tui.cli.exit_codes import Exit

# No typing, dataclasses or Config on the path of a command that doesn't use them: each costs a
# short command like `pending` more than its own work (docs/architecture.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from typing import Any
    from collections.abc import Awaitable, Callable

    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.config import Config
    from poppy_tui.agent.store import Store


class Context:
    """What every command gets: the paths, the config file (where the TUI keeps a theme picked in
    its palette) and its settings, checked already. `config` (Config) is built on first use."""

    __slots__ = ("paths", "config_file", "_settings", "_config")

    def __init__(
        self,
        paths: Paths,
        config: Config | None = None,
        config_file: Path | None = None,
        *,
        settings: dict[str, Any] | None = None,
    ) -> None:
        self.paths = paths
        self.config_file = config_file
        self._config = config
        self._settings = settings or {}

    @property
    def config(self) -> Config:
        if self._config is None:
            from poppy_tui.agent.config import config_from_settings

            self._config = config_from_settings(self._settings)
        return self._config


def config_file_of(args: argparse.Namespace, paths: Paths) -> Path:
    given = getattr(args, "config", None)
    return Path(given).expanduser().absolute() if given else paths.config_file


def load_context(args: argparse.Namespace) -> Context:
    paths = resolve_paths(getattr(args, "home", None))
    config_file = config_file_of(args, paths)
    if getattr(args, "config", None) and not config_file.is_file():
        # A missing default config.toml means defaults; a file named on the command line must exist.
        raise ConfigError(f"{config_file}: no such config file (given with --config)")
    # Checked now, for every command (a broken config is a usage error even where unused); read
    # from the data folder's record of it while the file is unchanged (agent/config_file.py).
    return Context(paths, None, config_file, settings=read_settings(config_file, paths.data_dir))


def require_terminal() -> None:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CliError(
            "the TUI needs a terminal; from scripts use a command such as 'poppy-tui pending' (see --help)",
            Exit.USAGE,
        )


def run_tui(
    agent: Agent,
    initial_screen: str = "inbox",
    config_file: Path | None = None,
    demo: bool = False,
    notice: Any = None,
) -> None:
    from poppy_tui.ui.app import PoppyApp

    PoppyApp(
        agent, initial_screen=initial_screen, config_file=config_file, demo=demo, notice=notice
    ).run()


def open_log(ctx: Context) -> None:
    """The log of the home's data folder (agent/logfile.py), for the TUI and every command that
    talks to Companies: what they catch and carry on from is written there with its traceback."""
    from poppy_tui.agent.logfile import open_log as open_log_file

    open_log_file(ctx.paths.log_file, ctx.config.log_level)


def open_agent(ctx: Context, *, lazy_store: bool = False) -> Agent:
    from poppy_tui.agent.agent import Agent

    ctx.paths.ensure()
    open_log(ctx)
    return Agent.open(ctx.paths, ctx.config, lazy_store=lazy_store)


def close_agent(agent: Agent) -> None:
    from poppy_tui.cli.event_loop import run

    run(agent.aclose())


# A listed Company that can't be reached must not hold the TUI back for long.
DISCOVERY_ON_START_SECONDS = 10.0


async def discover_listed(agent: Agent) -> None:
    """Add the Companies config.toml lists and the store doesn't know yet (known ones cost nothing)."""
    import asyncio

    from poppy_tui.cli.output import company_line, note, safe_line

    for entry in agent.config.companies:
        if agent.find_company(entry) is not None:
            continue
        note(f"adding {safe_line(entry, 200)} (listed in the config)...")
        try:
            company = await asyncio.wait_for(agent.add_company(entry), DISCOVERY_ON_START_SECONDS)
        except TimeoutError:
            note(
                f"warning: {safe_line(entry, 200)} did not answer in {DISCOVERY_ON_START_SECONDS:g}s; skipped"
            )
        except expected_errors() as exc:
            note(f"warning: could not add {safe_line(entry, 200)}: {safe_line(str(exc), 300)}")
        else:
            note(f"added {company_line(company)}")


def open_store(ctx: Context) -> Store:
    from poppy_tui.agent.store import Store

    ctx.paths.ensure()
    return Store.open(ctx.paths.database)


def with_agent(ctx: Context, work: Callable[[Agent], Awaitable[int]]) -> int:
    from poppy_tui.cli.event_loop import run

    async def session() -> int:
        agent = open_agent(ctx)
        try:
            return await work(agent)
        finally:
            await agent.aclose()

    return run(session())
