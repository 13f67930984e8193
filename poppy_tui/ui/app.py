"""PoppyApp: the one module that pulls in Textual. Screens load on first use."""

from __future__ import annotations

from poppy_tui.ui import _start_time  # first: the start-up time includes Textual's import

import asyncio
import logging
from datetime import datetime, UTC
from functools import partial
from pathlib import Path
from typing import Any
from collections.abc import Callable

from textual.app import App
from textual.screen import ModalScreen, Screen
from textual.worker import Worker, WorkerState

from poppy_tui.ui.messages import StoreChanged
from poppy_tui.ui.navigation import GLOBAL_BINDINGS, NAVIGATION, key_for

log = logging.getLogger("poppy_tui.ui")

# Other processes (CLI agents) write the same SQLite file; this is how soon their operations show.
POLL_SECONDS = 0.5
# A dispatcher that failed is started again after this long; its work is in the store, not in memory.
DISPATCHER_RESTART_SECONDS = 5.0


def _inbox() -> Screen:
    from poppy_tui.ui.screens.inbox import InboxScreen

    return InboxScreen()


def _history() -> Screen:
    from poppy_tui.ui.screens.history import HistoryScreen

    return HistoryScreen()


def _companies() -> Screen:
    from poppy_tui.ui.screens.companies import CompaniesScreen

    return CompaniesScreen()


def _agents() -> Screen:
    from poppy_tui.ui.screens.agents import AgentsScreen

    return AgentsScreen()


def _compose() -> Screen:
    from poppy_tui.ui.screens.composer import ComposerScreen

    return ComposerScreen()


def _talk() -> Screen:
    from poppy_tui.ui.screens.conversation import ConversationScreen

    return ConversationScreen()


class PoppyApp(App[None]):
    """Decisions (approve, decline, withdraw, resolve) are screen bindings only, never command-palette
    commands: the palette selects its top hit, so one stray Enter could approve."""

    # Absolute: Textual resolves a relative CSS_PATH against the subclass's module.
    CSS_PATH = str(Path(__file__).with_name("poppy.tcss"))
    TITLE = "poppy"
    MODES = {
        "inbox": _inbox,
        "history": _history,
        "companies": _companies,
        "agents": _agents,
        "compose": _compose,
        "talk": _talk,
    }
    BINDINGS = GLOBAL_BINDINGS  # ui/navigation.py

    def __init__(
        self,
        agent: Any,
        *,
        initial_screen: str = "inbox",
        clock: Callable[[], datetime] | None = None,
        config_file: Path | None = None,
        demo: bool = False,
        notice: Any = None,
        stopped_demo: Any = None,
    ) -> None:
        """`notice`: what the inbox says at its top until dismissed or until an operation arrives
        (a str, or ui/screens/inbox_notice.StartNotice to offer Ctrl+G for a sign-in).
        `stopped_demo`: the agent/demo_marker.DemoRun of a demo's home opened after the demo
        ended: its Company is gone, so nothing of it is sent, and the screens say so."""
        mode, _, argument = initial_screen.partition(":")
        if mode not in self.MODES and mode not in ("review", "help"):
            raise ValueError(
                f"unknown initial screen {initial_screen!r}; one of {', '.join(self.MODES)}, review:N, help"
            )
        # App.__init__ reads DEFAULT_MODE, so the first screen built is the one asked for.
        # (On the instance on purpose: type checkers know these as class variables only.)
        self.DEFAULT_MODE = first = mode if mode in self.MODES else "inbox"  # type: ignore[misc]
        # The first screen is the default screen (get_default_screen), its mode added once the app
        # is mounted. Textual holds a mode's first screen in the start-up batch until all its
        # widgets are mounted: it laid out and drew the whole screen there, a frame the batch never
        # writes (~40 ms), and the first frame written after it was a partial one.
        self.MODES = {name: screen for name, screen in type(self).MODES.items() if name != first}  # type: ignore[misc]
        super().__init__()
        # Textual reparses all CSS for each new mode's screen; this one only when the theme changes.
        from poppy_tui.ui.stylesheet import StableStylesheet

        self.stylesheet = StableStylesheet(variables=self.theme_variables)
        self.agent = agent
        self.demo = demo  # `poppy-tui --demo`: its Company stops when the TUI does
        self.stopped_demo: Any = stopped_demo
        self.notice: Any = notice
        self.notice_baseline: int | None = None  # how many waited when the notice was first shown
        self.unsignable: str | None = None  # why approvals can't be signed here, once known
        self.clock: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))
        self._initial_extra = (mode, argument) if mode in ("review", "help") else None
        self._change_token: Any = None
        self._dispatcher_stop: asyncio.Event | None = None
        self.startup_ms: float | None = None
        self.painted = False  # the first frame is on screen; screens may read the store
        self.keymap_overrides: dict[str, str] = dict(getattr(agent.config, "keybindings", {}) or {})
        self._outcome_watcher: Any = None  # made at its first look, after the first frame
        self._outcomes_toasted: set[int] = set()  # since the notifier last announced
        # Where the store stood when the app began: notifications start watching after the first
        # frame, and announce what was updated after this (another process's new operation that
        # arrived while the first frame was drawn included). One indexed read.
        latest = getattr(self.reader, "latest_update", None)
        self._started_at: str | None = latest() if latest is not None else None
        # Where a theme picked in the palette is kept; None (tests, screenshots) keeps it for this run only.
        self.config_file = config_file
        self._theme_ready = False
        self._terminal_fd: int | None = None  # the terminal watched for a hang-up, from on_ready
        self._poll_failing = False  # the store poll failed and has not worked since

    @property
    def outcome_watcher(self) -> Any:
        """ui/outcome_toasts.OutcomeWatcher, imported when first used (after the first frame)."""
        if self._outcome_watcher is None:
            from poppy_tui.ui.outcome_toasts import OutcomeWatcher

            self._outcome_watcher = OutcomeWatcher()
        return self._outcome_watcher

    @property
    def reader(self) -> Any:
        """What the first frame and the polls read (the inbox's lists, the change token):
        Agent.reader, the light InboxReader until the whole store is open, then the store."""
        return self.agent.reader

    # ---- start-up -------------------------------------------------------------------------

    def get_default_screen(self) -> Screen:
        make = type(self).MODES[self.DEFAULT_MODE]
        assert callable(make)  # each of our modes is a function that builds its screen
        screen = make()
        # Textual reads a screen's CSS_PATH when it shows a mode's or a pushed screen, not the
        # default one: read it here (the inbox has none; another first screen has screens.tcss).
        for path in screen.css_path:
            if not self.stylesheet.has_source(str(path)):
                self.stylesheet.read(path)
                self.stylesheet.reparse()
        return screen

    def on_mount(self) -> None:
        self.add_mode(self.DEFAULT_MODE, type(self).MODES[self.DEFAULT_MODE])  # its screen is built
        self._open_log()
        theme = getattr(self.agent.config, "theme", None)
        if theme:
            if theme in self.available_themes:
                self.theme = theme
            else:
                self.notify(
                    f"Unknown theme {theme!r} in the config; using {self.theme}. "
                    f"Known: {', '.join(sorted(self.available_themes))}",
                    severity="warning",
                    markup=False,
                )
        if self.keymap_overrides:
            self.set_keymap(self.keymap_overrides)
        self._theme_ready = True  # from here on a theme change is the person's choice

    def _open_log(self) -> None:
        """The home's log (agent/logfile.py), unless one is open (the CLI opened it: cli/context.py)
        or the app runs headless (tests, screenshots), whose process keeps its own."""
        from poppy_tui.agent import logfile

        paths = getattr(self.agent, "paths", None)
        if logfile.current() is None and paths is not None and not self.is_headless:
            logfile.open_log(paths.log_file, getattr(self.agent.config, "log_level", None))

    def log_hint(self) -> str:
        """' Details in <log>.' for an error toast, or '' when no log is open."""
        from poppy_tui.agent import logfile

        where = logfile.where()
        return f" {where}" if where else ""

    def watch_theme(self, theme: str) -> None:
        if not self._theme_ready or self.config_file is None:
            return
        from poppy_tui.ui.safe import plain_line
        from poppy_tui.ui.theme_setting import save_theme

        try:
            save_theme(self.config_file, theme)
        except (OSError, ValueError) as exc:
            self.notify(
                f"Theme {plain_line(theme, 80)} is used until you quit, but could not be saved: "
                f"{plain_line(exc)}",
                severity="warning",
                markup=False,
            )

    def on_ready(self) -> None:
        # Ready comes after the first layout and frame: the inbox read its first page when it
        # mounted, so its rows were in that frame (what the first-frame target in docs/benchmarks.md
        # times).
        self.startup_ms = _start_time.elapsed_ms()
        age = _start_time.process_age_ms()
        message = f"started in {self.startup_ms:.0f} ms" + (
            f" ({age:.0f} ms since process start)" if age else ""
        )
        self.log.info(message)
        log.info(message)
        self.painted = True
        # Screens that read the store while mounting, with nothing committed since, aren't read again.
        self._change_token = token = self.reader.change_token()
        for screen in self.screen_stack:
            if getattr(screen, "read_at_token", None) != token:
                screen.post_message(StoreChanged())
        # A terminal that vanishes without SIGHUP is noticed by the poll (ui/terminal_watch.py).
        self._terminal_fd = self._watched_terminal()
        self.set_interval(POLL_SECONDS, self._poll_store)
        if self._initial_extra is not None:
            mode, argument = self._initial_extra
            if mode == "review" and argument.isdigit():
                self.open_review(int(argument))
            elif mode == "help":
                self.action_help()
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        """What waits until the rows are on screen: notifications and outcome toasts take their
        first look, and the network stack (httpx2, keys, the dispatcher...) is imported and built
        in a thread, then the dispatcher starts on the event loop as before."""
        from poppy_tui.ui import startup_gc

        startup_gc.release()  # held by the CLI from the start (ui/startup_gc.py)
        for screen in self.screen_stack:
            shown = getattr(screen, "first_frame_shown", None)
            if shown is not None:
                shown()
        self._start_notifications()
        self._announce_outcomes()  # the first look only takes note of what is on its way
        self.run_worker(
            self._prepare_network, name="network", group="network", thread=True, exit_on_error=False
        )

    def _prepare_network(self) -> None:
        """In a thread: imports and builds what sending needs, and judges whether approvals can
        be signed (the keyring's backend is imported and probed here, never on the event loop)."""
        prepare = getattr(self.agent, "prepare_network", None)
        problem: str | None = None
        try:
            if prepare is not None:
                prepare()
            check = getattr(self.agent, "startup_signing_problem", None)
            problem = check() if check is not None else None
        finally:
            # Started even if preparing failed: the dispatcher reports its own failure (and is
            # started again), so sending is never silently off.
            self.call_from_thread(self._network_ready, problem)

    def _network_ready(self, problem: str | None) -> None:
        self._start_dispatcher()
        self._warn_if_unsignable(problem)

    def _warn_if_unsignable(self, problem: str | None) -> None:
        """Say at start-up, not at the first approval, when approvals can't be signed here: in
        two lines; an operation's review says why and the fix in full (its banner)."""
        self.unsignable = problem
        if problem:
            self.notify(
                "Approvals can't be signed on this machine: you can browse, not approve. "
                "An operation's review says why and how to fix it.",
                severity="warning",
                markup=False,
                timeout=15,
            )
            for screen in self.screen_stack:
                screen.post_message(StoreChanged())  # an open review's banner says it now

    def stopped_company(self, base_url: str) -> bool:
        """This Company ran in a demo that has ended: nothing can reach it any more."""
        stopped = self.stopped_demo
        return stopped is not None and stopped.served(base_url)

    def _start_dispatcher(self) -> None:
        run = getattr(self.agent, "run_dispatcher", None)
        if run is None:
            return
        if self.stopped_demo is not None and all(
            self.stopped_company(c.base_url) for c in self.agent.store.list_companies()
        ):
            # Nothing here can be sent: the only Company is a demo's that has stopped, and a
            # sender would retry a port nothing listens on until the terms expire.
            log.info("a stopped demo's home: no dispatcher")
            return
        self._dispatcher_stop = asyncio.Event()
        # The callable, not a coroutine: an app that exits before the worker starts leaves nothing unawaited.
        self.run_worker(
            partial(run, self._dispatcher_stop),
            name="dispatcher",
            group="dispatcher",
            exit_on_error=False,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name not in ("network", "dispatcher") or event.state != WorkerState.ERROR:
            return
        from poppy_tui.ui.safe import plain_line

        error = event.worker.error
        if event.worker.name == "network":
            # The dispatcher is started all the same and says so if it can't send.
            log.error("preparing the network stack failed", exc_info=error)
            self.notify(
                f"Preparing to send failed: {plain_line(error)}.{self.log_hint()}",
                severity="error",
                markup=False,
                timeout=15,
            )
            return
        log.error(
            "sending stopped; the dispatcher starts again in %g s",
            DISPATCHER_RESTART_SECONDS,
            exc_info=error,
        )
        self.notify(
            f"Sending stopped: {plain_line(error)}. Approvals are kept; trying again in "
            f"{DISPATCHER_RESTART_SECONDS:g} s.{self.log_hint()}",
            severity="error",
            markup=False,
            timeout=DISPATCHER_RESTART_SECONDS,
        )
        self.set_timer(DISPATCHER_RESTART_SECONDS, self._start_dispatcher)

    async def on_unmount(self) -> None:
        if self._dispatcher_stop is not None:
            self._dispatcher_stop.set()

    def _watched_terminal(self) -> int | None:
        if self.is_headless:
            return None
        import sys

        from poppy_tui.ui.terminal_watch import watchable_terminal

        stream = sys.__stdin__
        try:
            fd = stream.fileno() if stream is not None else None
        except (OSError, ValueError):
            return None
        return fd if fd is not None and watchable_terminal(fd) else None

    def _poll_store(self) -> None:
        if self._terminal_fd is not None:
            from poppy_tui.ui.terminal_watch import terminal_hung_up

            if terminal_hung_up(self._terminal_fd):
                log.warning(
                    "the terminal hung up; poppy-tui ends (what is recorded stays recorded)"
                )
                self._terminal_fd = None
                self.exit()
                return
        try:
            token = self.reader.change_token()
        except Exception as exc:  # logged: a locked or vanished database must not kill the UI
            if not self._poll_failing:  # once per outage, not twice a second
                self._poll_failing = True
                log.warning("reading the queue for changes failed", exc_info=True)
                from poppy_tui.ui.safe import plain_line

                self.notify(
                    f"Can't read the queue for changes: {plain_line(exc)}. Trying again."
                    f"{self.log_hint()}",
                    severity="warning",
                    markup=False,
                )
            return
        if self._poll_failing:
            self._poll_failing = False
            log.info("reading the queue for changes works again")
        if token != self._change_token:
            self._change_token = token
            self.notify_store_changed()
            self._announce_changes()

    # ---- notifications (poppy_tui/ui/notifications.py) --------------------------------------

    def _start_notifications(self) -> None:
        from poppy_tui.agent.config import NotificationSettings
        from poppy_tui.ui.notifications import Notifier, OperationWatcher

        self.watcher = OperationWatcher(self.agent.store, self._started_at)
        self.notifier = Notifier(
            getattr(self.agent.config, "notifications", None) or NotificationSettings(),
            toast=lambda text, severity: self.notify(
                text, severity=severity, markup=False, timeout=8
            ),
            bell=self.bell,
            write=self.write_to_terminal,
        )
        self._announce_changes()  # the first look only takes note of what is already there

    def _announce_changes(self) -> None:
        watcher = getattr(self, "watcher", None)
        if watcher is None:
            return
        try:
            events = watcher.changes()
        except Exception:  # logged: a locked database; the next poll looks again
            log.warning("looking for what to notify failed", exc_info=True)
            return
        # A review: its banner says how a send ended. The stack is empty while the app shuts down.
        shown = getattr(self.screen_stack[-1], "operation_row", None) if self.screen_stack else None
        said = set(self._outcomes_toasted)
        self._outcomes_toasted.clear()
        if isinstance(shown, int):
            said.add(shown)
        self.notifier.announce(events, frozenset(said))

    def get_driver_class(self) -> Any:
        """Textual's driver for this platform, made to hand the app the driver it runs with
        (`terminal_driver`): notifications write raw sequences through it, as Textual's own
        bell() does through the driver it keeps to itself."""
        platform_driver = super().get_driver_class()

        class RecordedDriver(platform_driver):  # type: ignore[valid-type,misc]
            def __init__(self, app: Any, **options: Any) -> None:
                super().__init__(app, **options)
                app.terminal_driver = self

        return RecordedDriver

    def write_to_terminal(self, sequence: str) -> None:
        """Raw output to the terminal, through the driver, as Textual's own bell() does."""
        driver = getattr(self, "terminal_driver", None)
        if sequence and not self.is_headless and driver is not None:
            driver.write(sequence)

    def action_quit(self) -> None:  # type: ignore[override]
        from poppy_tui.ui.screens.quit_dialog import approvals_in_flight, QuitScreen

        if isinstance(self.screen, QuitScreen):
            return
        waiting = approvals_in_flight(self.agent.store)
        if not waiting:
            self.exit()
            return
        self.push_screen(QuitScreen(waiting, demo=self.demo))

    def notify_store_changed(self) -> None:
        # Screens under a modal hear it too: a review under the confirm dialog must see new terms.
        for screen in self.screen_stack:
            screen.post_message(StoreChanged())
        self._announce_outcomes()

    def _announce_outcomes(self) -> None:
        try:
            toasts = self.outcome_watcher.check(self.agent.store)
        except Exception:  # logged: a locked database; the next change looks again
            log.warning("looking for outcomes to announce failed", exc_info=True)
            return
        for toast in toasts:
            self._outcomes_toasted.add(toast.operation_row)  # the notifier's toast would repeat it
            # The review of that operation says it in its banner; once is enough there.
            if getattr(self.screen, "operation_row", None) == toast.operation_row:
                continue
            self.notify(toast.message, severity=toast.severity, markup=False, timeout=10)

    # ---- keys -----------------------------------------------------------------------------

    def key_for(self, binding_id: str, default: str) -> str:
        """The key the person has for a binding, after their keymap."""
        return key_for(self.keymap_overrides, binding_id, default)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Letters typed in a dialog must not switch screens behind it, and on a screen where
        # the person types (New request, Talk) a letter is text, never a screen switch: Esc first.
        if action in NAVIGATION and (isinstance(self.screen, ModalScreen) or self._typing()):
            return False
        # A "q" in a message or a field is a letter; Esc, then q.
        return not (action == "quit" and self._typing())

    def _typing(self) -> bool:
        """Letters are text on a screen where the person types (New request, Talk), while
        something there has the keys; with nothing focused (back from a review opened there)
        they are commands again."""
        screen = self.screen
        return bool(getattr(screen, "TYPING", False)) and (
            isinstance(screen, ModalScreen) or screen.focused is not None
        )

    # ---- navigation -----------------------------------------------------------------------
    # One model: each global key always shows the same screen, at its top level. Screens opened
    # from it (a review, a record) are closed on the way, so no stack left behind in one mode
    # surprises the person when they come back to it.

    def go(self, mode: str) -> Screen:
        self.switch_mode(mode)
        while len(self.screen_stack) > 1 and not isinstance(self.screen, ModalScreen):
            self.pop_screen()
        return self.screen

    def action_show_inbox(self) -> None:
        self.go("inbox")

    def action_show_history(self) -> None:
        self.go("history")

    def action_show_companies(self) -> None:
        self.go("companies")

    def action_show_agents(self) -> None:
        self.go("agents")

    def action_compose(self) -> None:
        self.go("compose")

    def action_talk(self) -> None:
        self.go("talk")

    def compose_for(self, company_id: int) -> None:
        """New request, with this Company picked (from the Companies screen)."""
        screen = self.go("compose")
        choose = getattr(screen, "choose_company", None)
        if choose is not None:
            choose(company_id)

    def talk_to(self, company_id: int) -> None:
        screen = self.go("talk")
        choose = getattr(screen, "choose_company", None)
        if choose is not None:
            choose(company_id)

    def action_help(self) -> None:
        from poppy_tui.ui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def open_review(self, operation_row: int) -> None:
        from poppy_tui.ui.screens.review import ReviewScreen

        self.push_screen(ReviewScreen(operation_row))

    def open_history_detail(self, operation_row: int) -> None:
        from poppy_tui.ui.screens.history_detail import HistoryDetailScreen

        self.push_screen(HistoryDetailScreen(operation_row))
