"""`poppy-tui signin COMPANY [--device|--direct|--mediated] [--scope S ...]` and
`poppy-tui signout COMPANY`.

The person signs in themselves: the Company's page (Device, Direct) or their own typing
(Mediated: typed at prompts that Ctrl-C ends at once; secret fields never echoed, kept or
logged). Company text (its name, field labels, messages, links) is shown only through safe_line. Prompts and progress go
to stderr; the one-line result goes to stdout.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from poppy_tui.cli.errors import CliError
from poppy_tui.cli.exit_codes import Exit
from poppy_tui.cli.output import emit, note, note_wrapped, safe_line
from poppy_tui.safety.wording import followed_by, possessive

if TYPE_CHECKING:
    from poppy_tui.agent.agent import Agent

SIGNIN_EXIT_DOC = (
    "0 signed in (or already signed in with those scopes), 1 sign-in failed or refused, 2 usage"
)


def cmd_signin(ctx: Any, args: argparse.Namespace) -> int:
    from poppy_tui.cli.companies_commands import need_company
    from poppy_tui.cli.context import with_agent

    async def work(agent: Agent) -> int:
        from poppy_tui.agent.signin.errors import SignInError

        company = need_company(agent, args.company)
        scopes = _scopes(args.scope)
        try:
            kind = args.kind or agent.signins.default_kind(company)
            # An existing grant that already covers what would be asked needs no new sign-in.
            asked = scopes or list(agent.signins.offer(company).scopes_for(kind))
            if asked and agent.signins.covers(company, asked):
                emit(f"already signed in to {safe_line(company.name, 200)} with {' '.join(asked)}")
                return Exit.OK
            if kind == "mediated" and not sys.stdin.isatty():
                raise CliError(
                    "mediated sign-in asks for your credentials: run it in a terminal", Exit.USAGE
                )
            options = (
                {"open_browser": (lambda url: None)} if kind == "direct" and args.no_browser else {}
            )
            flow = await agent.signins.begin(company, kind, scopes or None, **options)
            try:
                grant = await _drive(flow, args)
            finally:
                await flow.aclose()
        except SignInError as exc:
            raise CliError(str(exc), _code_of(str(exc))) from None
        scopes_text = " ".join(grant.scopes) or "no scopes"
        who = f" as {safe_line(grant.account, 100)}" if grant.account else ""
        emit(
            f"signed in to {safe_line(company.name, 200)}{who} ({grant.kind}), scopes {scopes_text}"
        )
        return Exit.OK

    return with_agent(ctx, work)


def _code_of(message: str) -> int:
    return Exit.USAGE if "does not offer" in message or "does not grant" in message else Exit.ERROR


def _scopes(values: list[str] | None) -> list[str]:
    from poppy_tui.protocol.signin import is_scope_token

    scopes: list[str] = []
    for value in values or []:
        for scope in value.replace(",", " ").split():
            if not is_scope_token(scope):
                raise CliError(f"--scope {safe_line(scope, 100)!r} is not a scope name", Exit.USAGE)
            scopes.append(scope)
    return scopes


async def _drive(flow: Any, args: argparse.Namespace) -> Any:
    from poppy_tui.agent.signin.flows import DeviceSignIn, DirectSignIn

    header = f"Signing in to {safe_line(flow.company_name, 200)} ({host_line(flow.company_domain)})"
    note_wrapped(f"{header}, scopes: {' '.join(flow.scopes) or 'none'}", indent="")
    if isinstance(flow, DeviceSignIn):
        return await _device(flow)
    if isinstance(flow, DirectSignIn):
        return await _direct(flow, args)
    return await ask_mediated(flow)


async def _device(flow: Any) -> Any:
    await show_device_prompt(flow)
    note("Waiting for you to confirm (Ctrl-C to stop)...")
    return await flow.wait()


# Lines of a terminal a QR code must leave to what surrounds it: the demo's banner with the
# credentials above, the link, the code and the waiting line below.
LINES_BESIDE_QR = 14


def qr_fits(qr: str) -> bool:
    """Whether the terminal is tall enough for the QR code and the lines around it. At 80x24 it
    is not: the code alone is about 17 lines, and printing it pushed the credentials off screen."""
    import shutil

    return shutil.get_terminal_size().lines >= qr.count("\n") + 1 + LINES_BESIDE_QR


async def show_device_prompt(flow: Any) -> None:
    """Starts Device Sign-In and shows the link and code (and a QR code of the link on a terminal tall
    enough for it, qr_fits)."""
    from poppy_tui.agent.signin.qr import qr_text

    await flow.start()
    link = flow.link
    if link is not None:
        if sys.stderr.isatty():
            qr = qr_text(link)
            if qr_fits(qr):
                note(qr)  # first, so the link and code stay next to the prompt that waits
        note(f"Open {safe_line(link, 500)}")
        host = flow.link_host
        if host is not None and host.warning:
            note(safe_line(host.warning, 300))
        note(f"and confirm the code {safe_line(flow.user_code, 64)} on that page.")
    else:
        note(
            f"{safe_line(flow.company_name, 200)} gave a sign-in link outside its own domain "
            f"({host_line(flow.company_domain)}), so it is not shown. Enter the code "
            f"{safe_line(flow.user_code, 64)} on {possessive(safe_line(flow.company_name, 200))} own site."
        )


async def _direct(flow: Any, args: argparse.Namespace) -> Any:
    import asyncio  # here and below: cli/main.py imports this module to build the parser

    from poppy_tui.agent.signin.flows import shown_host_of
    from poppy_tui.cli.prompts import read_line_in_background

    url = await flow.start(open_browser=not args.no_browser)
    opened = " (opened in your browser)" if flow.browser_opened else "; open this in your browser"
    note(f"Sign in on {possessive(safe_line(flow.company_name, 200))} page{opened}:")
    note(f"  {safe_line(url, 2000)}")
    host = shown_host_of(url)
    if host is not None and host.warning:
        note(safe_line(host.warning, 300))
    if not sys.stdin.isatty():
        note("Waiting for the browser to come back to poppy-tui (Ctrl-C to stop)...")
        return await flow.wait()
    note(
        "Waiting for the browser to come back to poppy-tui. If it can't (another machine), paste the"
    )
    note("address the browser ended on, then Enter:")
    pasted = read_line_in_background()
    received = asyncio.ensure_future(flow.wait())
    done, _ = await asyncio.wait({received, pasted}, return_when=asyncio.FIRST_COMPLETED)
    if received in done:
        return received.result()
    received.cancel()
    line = pasted.result().strip()
    if not line:
        raise CliError("nothing was pasted; sign-in stopped")
    return await flow.complete(line)


# Wrong one-time codes the person may retype before the sign-in stops (the Company may allow fewer).
CODE_TRIES = 3


async def ask_mediated(flow: Any) -> Any:
    """The Company's declared fields (secrets never echoed), then any one-time code. Each prompt
    ends at once on Ctrl-C (cli/prompts.py); a wrong code asks for the code again, not for the
    fields, while the Company keeps the code step open."""
    from poppy_tui.agent.signin.errors import CodeRejected
    from poppy_tui.agent.signin.flows import CodeRequired
    from poppy_tui.cli.prompts import ask

    endpoint = flow.endpoint_shown  # as the browser and DNS read it, before anything is typed
    # Each line fits 80 columns: a line the terminal wraps breaks mid-word.
    note_wrapped(
        f"Your answers go once to {safe_line(flow.company_name, 200)} at {safe_line(endpoint.line, 120)} "
        "and nowhere else; secrets are not shown or kept.",
        indent="",
    )
    if endpoint.warning:
        note_wrapped(safe_line(endpoint.warning, 300), indent="")
    values: dict[str, str] = {}
    try:
        for field in flow.fields:
            label = safe_line(field.label, 100)
            if field.secret:
                # Not shown as typed, whatever `secret` the Company declared (safety/secret_fields.py).
                values[field.name] = await ask(f"{label} (not shown): ", secret=True)
            else:
                values[field.name] = await ask(f"{label}: ")
        result = await flow.submit(values)
    finally:
        values.clear()
    wrong = 0
    said = None
    while isinstance(result, CodeRequired):
        if result.message and result is not said:
            note_wrapped(
                f"{safe_line(flow.company_name, 200)} says: {safe_line(result.message, 300)}",
                indent="",
            )
        said = result
        code = await ask("One-time code (not shown): ", secret=True)
        try:
            result = await flow.submit_code(code)
        except CodeRejected as exc:
            wrong += 1
            if wrong >= CODE_TRIES:
                raise
            note_wrapped(followed_by(safe_line(str(exc), 300), "type the code again"), indent="")
    return result


def host_line(netloc: str) -> str:
    """A host as the browser reads it (A-labels), marked when it is a look-alike."""
    from poppy_tui.safety.web_host import show_host

    return safe_line(show_host(netloc).line, 200)


def cmd_signout(ctx: Any, args: argparse.Namespace) -> int:
    from poppy_tui.cli.companies_commands import need_company
    from poppy_tui.cli.context import with_agent

    async def work(agent: Agent) -> int:
        company = need_company(agent, args.company)
        result = await agent.signins.sign_out(company)
        name = safe_line(company.name, 200)
        if not result.was_signed_in:
            emit(f"not signed in to {name}")
            return Exit.OK
        if result.revoked:
            emit(f"signed out of {name}; the Company revoked the sign-in")
            return Exit.OK
        emit(f"signed out of {name} here")
        raise CliError(
            f"{name} could not be told to revoke the sign-in ({safe_line(result.detail, 300)}); "
            "its tokens were deleted here, and you can disconnect poppy-tui on the Company's site",
            Exit.ERROR,
        )

    return with_agent(ctx, work)
