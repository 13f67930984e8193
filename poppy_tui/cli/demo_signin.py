"""The demo's sign-in before its requests: Device Sign-In in a browser, or, for a newcomer with no
browser on this machine (ssh, headless), Mediated Sign-In typed here.

While the device prompt waits, Enter switches to the terminal: the demo user's email, the password
unseen (never echoed, never printed back), then the one-time code. Both kinds go through
the agent's SignIns (agent/signin) and the `signin` command's own prompts; nothing here speaks OAuth.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any

from poppy_tui.cli.output import note, note_wrapped, safe_line
from poppy_tui.safety.wording import followed_by

if TYPE_CHECKING:
    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.store import CompanyRecord

# Wrong password or code: the person gets a few tries before the demo goes on signed out.
TERMINAL_ATTEMPTS = 3
TERMINAL_HINT = "No browser here? Press Enter to sign in here with the email and password above."


async def sign_in_first(agent: Agent, company: CompanyRecord) -> str | None:
    """Sign in as the demo user. None when signed in; else why not, for the TUI to say too: a
    failure leaves the demo signed out (its requests say so)."""
    from poppy_tui.agent.signin.errors import SignInError

    note("Sign in first, as the demo user (credentials above):")
    try:
        grant = await _in_browser_or_terminal(agent, company)
    except SignInError as exc:
        why = safe_line(str(exc), 300)
        note_wrapped(
            followed_by(
                f"sign-in failed: {why}",
                "the demo goes on signed out: its requests get "
                "sign-in challenges (the inbox says how to sign in)",
            )
        )
        return why
    if grant is None:
        note("  not signed in; the requests go signed out")
        return "not signed in"
    note(f"  signed in ({grant.kind}), scopes {' '.join(grant.scopes)}")
    missing = [
        scope
        for scope in agent.signins.offer(company).scopes_for("device")
        if scope not in grant.scopes
    ]
    if missing:
        # Mediated Sign-In grants the demo less (no bookings): say so before a request meets it.
        note_wrapped(
            f"{grant.kind} sign-in doesn't grant {safe_line(' '.join(missing), 200)}; "
            "a request that needs it asks you to sign in again (the inbox says so)"
        )
    return None


async def _in_browser_or_terminal(agent: Agent, company: CompanyRecord) -> Any:
    from poppy_tui.cli.signin_commands import show_device_prompt

    from poppy_tui.agent.signin.flows import DeviceSignIn

    flow = await agent.signins.begin(company, "device")
    assert isinstance(flow, DeviceSignIn)  # the kind asked for
    try:
        await show_device_prompt(flow)
        enter = _enter_pressed()
        if enter is not None:
            note(TERMINAL_HINT)
        note("Waiting for you to confirm (Ctrl-C to stop)...")
        confirmed = asyncio.ensure_future(flow.wait())
        watched: set[asyncio.Future[Any]] = {confirmed} if enter is None else {confirmed, enter}
        try:
            done, _ = await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if enter is not None:
                enter.cancel()  # stops watching stdin before the TUI reads it
        if confirmed in done:
            return confirmed.result()
        confirmed.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await confirmed
    finally:
        await flow.aclose()
    return await sign_in_in_terminal(agent, company)


async def sign_in_in_terminal(agent: Agent, company: CompanyRecord) -> Any:
    """Mediated Sign-In through the `signin --mediated` prompts, with a few tries."""
    from poppy_tui.agent.signin.errors import SignInError
    from poppy_tui.cli.signin_commands import ask_mediated

    note("Signing in here, as the demo user (Mediated Sign-In):")
    for attempt in range(1, TERMINAL_ATTEMPTS + 1):
        flow = await agent.signins.begin(company, "mediated")
        try:
            return await ask_mediated(flow)
        except SignInError as exc:
            if attempt == TERMINAL_ATTEMPTS:
                raise
            note_wrapped(followed_by(safe_line(str(exc), 300), "try again"), indent="  ")
        finally:
            await flow.aclose()
    return None


def _enter_pressed() -> asyncio.Future[None] | None:
    """A future done when a line (Enter) arrives on the terminal, or None where stdin can't be
    watched. The loop's reader, unlike a reading thread, is removed the moment the future is
    done or cancelled, so nothing is left to steal the TUI's keys afterwards."""
    loop = asyncio.get_running_loop()
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    future: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        try:
            data = os.read(fd, 4096)  # the terminal is in line mode: this is the whole line
        except OSError:
            data = b""
        if not data:  # end of input: nobody can type, keep waiting for the browser
            loop.remove_reader(fd)
        elif not future.done():
            future.set_result(None)

    try:
        loop.add_reader(fd, readable)
    except (NotImplementedError, OSError, ValueError):
        return None
    future.add_done_callback(lambda _: loop.remove_reader(fd))
    return future
