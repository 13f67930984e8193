"""The notice at the top of the inbox: what an empty or short inbox can't say by itself.

- What the app was started to say (StartNotice, from `poppy-tui --demo`): the demo's sign-in
  failed and its requests went out signed out, or its operations arrived already expired. Shown
  until dismissed (x) or until an operation arrives.
- Each sign-in a Company still waits for in a conversation (agent/sign_in_asks.py): the message
  the person wrote is not an operation yet, so nothing else in the inbox mentions it.

Ctrl+G signs in for the first of them (and says the message again, as Talk's Ctrl+G does).
Every Company string goes through ui/safe.py.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from textual.content import Content

from poppy_tui.ui.safe import plain_line, safe_line_content

# After the demo's failed sign-in is mended from the notice: the requests it made went out
# signed out, and nothing sends them again by itself.
SIGNED_IN_SINCE = (
    "Signed in. The demo's requests went out before that, signed out: make them again from New "
    "request (n) or Talk (t), or quit and run poppy-tui --demo for a fresh start."
)
# The same, when Ctrl+G also said the waiting Talk message again (its answer arrives here).
SIGNED_IN_SAID_AGAIN = (
    "Signed in, and your message in Talk was said again: its operation arrives here. The demo's "
    "other requests went out signed out: make them again from New request (n), or quit and run "
    "poppy-tui --demo for a fresh start."
)


@dataclass(frozen=True)
class StartNotice:
    text: str  # poppy-tui's own words (Company strings in it already sanitised)
    sign_in_company: int | None = None  # Ctrl+G signs in to this Company


@dataclass(frozen=True)
class SignInTarget:
    company_id: int
    scopes: tuple[str, ...] = ()
    conversation_row: int | None = None
    text: str | None = None  # the person's message, said again once signed in


@dataclass(frozen=True)
class Notice:
    content: Content
    sign_in: SignInTarget | None
    dismissable: bool


def inbox_notice(app: Any, pending_count: int) -> Notice | None:
    from poppy_tui.agent.sign_in_asks import open_sign_in_asks

    started: StartNotice | None = getattr(app, "notice", None)
    if isinstance(started, str):
        started = app.notice = StartNotice(started)
    if started is not None:
        baseline = getattr(app, "notice_baseline", None)
        if baseline is None:
            app.notice_baseline = pending_count
        elif pending_count > baseline:  # an operation arrived: the inbox speaks for itself now
            app.notice = started = None
    parts: list[Content] = []
    target: SignInTarget | None = None
    stopped = getattr(app, "stopped_demo", None)
    if stopped is not None:
        # A demo's home opened again after the demo ended (agent/demo_marker.py).
        from poppy_tui.agent.demo_marker import stopped_demo_line

        parts.append(Content.styled(stopped_demo_line(stopped), "bold"))
    if started is not None:
        keys = ["x: dismiss"]
        if started.sign_in_company is not None:
            target = SignInTarget(started.sign_in_company)
            keys.insert(0, "Ctrl+G: sign in")
        parts.append(
            Content.assemble(safe_line_content(started.text, 600), "  ", ("   ".join(keys), "bold"))
        )
    agent = app.agent
    for ask in open_sign_in_asks(agent):
        said = plain_line(agent.sessions.challenge_detail(ask.company, ask.challenge), 300)
        if ask.text:
            line = Content.assemble(
                said,
                ". Your message in Talk waits for it: «",
                safe_line_content(ask.text, 120),
                "».",
            )
        else:
            line = Content.assemble(said, ".")
        if ask.text and (
            target is None or (target.text is None and target.company_id == ask.company.id)
        ):
            # A start notice's sign-in at the same Company (the demo's failed one) signs in for
            # everything, then says this message again too (walk C4: it only signed in).
            scopes = () if target is not None else ask.challenge.scopes
            target = SignInTarget(ask.company.id, scopes, ask.conversation_row, ask.text)
            line = Content.assemble(line, "  ", ("Ctrl+G: sign in, then it is said again", "bold"))
        parts.append(line)
    if not parts:
        return None
    return Notice(Content("\n").join(parts), target, started is not None)


async def sign_in_then_ask_again(app: Any, target: SignInTarget) -> None:
    """Ctrl+G on the notice: the sign-in dialog, then (for a message waiting for it) the message
    said again in its conversation, whose answer arrives as any other."""
    from poppy_tui.ui.screens.signin import sign_in

    scopes = list(target.scopes) or None
    if not await sign_in(app, target.company_id, scopes):
        return
    started: StartNotice | None = getattr(app, "notice", None)
    says_again = target.text is not None and target.conversation_row is not None
    if started is not None and started.sign_in_company == target.company_id:
        app.notice = replace(
            started,
            text=SIGNED_IN_SAID_AGAIN if says_again else SIGNED_IN_SINCE,
            sign_in_company=None,
        )
    if target.text is None or target.conversation_row is None:
        return
    company = app.agent.store.get_company(target.company_id)
    try:
        result = await app.agent.say(
            company, target.text, conversation_row=target.conversation_row, origin="tui"
        )
    except Exception as exc:  # noqa: BLE001 - said on screen, never a crash
        app.notify(f"Not said again: {plain_line(exc)}", severity="error", markup=False, timeout=10)
        return
    if result.challenge is not None and not result.operation_rows:
        detail = result.detail or app.agent.sessions.challenge_detail(company, result.challenge)
        app.notify(f"{plain_line(detail)}.", severity="warning", markup=False, timeout=10)
