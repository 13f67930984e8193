"""The pages of `poppy-tui web` (Starlette): pairing, the list of what waits, one operation's review,
and the decisions, each a form POST with the session's CSRF token (web/guard.py checks Host and
Origin first).

Decisions go through the `Agent` as the TUI's do (`approve`, `decline`, `withdraw`,
`resolve_unknown`): recorded in the store before anything is sent, and sent by whichever
dispatcher holds the lease (this server's, the TUI's, `send --watch`). The handler reads the whole
form first (bounded in size and time), then decides in one synchronous call: a connection that
closes or a client that stalls never leaves a decision half made.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from collections.abc import AsyncIterator, Callable

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from poppy_tui.agent.clock import now_utc
from poppy_tui.agent.paired_devices import Device, DeviceBook, DeviceError
from poppy_tui.agent.review_words import not_approved_message
from poppy_tui.agent.status_words import checks_summary, plural
from poppy_tui.web import html, views
from poppy_tui.web.guard import BodyTooLarge
from poppy_tui.web.session import (
    COOKIE,
    CSRF_FIELD,
    ArmingClock,
    AttemptLimit,
    CsrfTokens,
    clear_device_cookie,
    set_device_cookie,
)

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
# A form is read within this long, or the request ends with nothing decided.
FORM_SECONDS = 10.0
# Live updates: how often a stream looks at the store's change token, and how many streams run.
LIVE_POLL_SECONDS = 0.25
MAX_STREAMS = 16
MAX_STREAMS_PER_DEVICE = 4
STREAM_KEEPALIVE_SECONDS = 15.0
# Pairing attempts the server takes in a minute (see session.AttemptLimit).
PAIRING_ATTEMPTS_PER_MINUTE = 20


@dataclass
class Settings:
    arm_delay_seconds: float
    grace_seconds: float
    require_passkey: bool = False
    # The WebAuthn relying party, set when a passkey is required: (rp_id, origin).
    relying_party: tuple[str, str] | None = None
    # The agent's clock (agent/clock.py), so the page and the store agree on "now".
    clock: Callable[[], datetime] = now_utc


class WebApp:
    """The pages, over one Agent and one device book."""

    def __init__(self, agent: Any, devices: DeviceBook, settings: Settings) -> None:
        self.agent = agent
        self.devices = devices
        self.settings = settings
        self.csrf = CsrfTokens()
        self.arming = ArmingClock(settings.arm_delay_seconds)
        self.pairing_attempts = AttemptLimit(PAIRING_ATTEMPTS_PER_MINUTE, 60.0)
        self.streams: dict[int, int] = {}
        # Resource reads started when a review is first shown (the TUI reads on opening too).
        self.reads: set[asyncio.Task] = set()
        self.stopping = asyncio.Event()
        self.passkeys: Any = None
        if settings.require_passkey:
            from poppy_tui.web.passkeys import PasskeyCeremonies

            assert settings.relying_party is not None
            self.passkeys = PasskeyCeremonies(devices, *settings.relying_party)
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.globals.update(plural=plural, checks_summary=checks_summary)
        # Our sentences that quote a Company's words (a hold's reason, a refusal, the banner) were
        # sanitised where they were made; once more here, so a page can't show a raw control.
        self.templates.filters["clean"] = lambda value: html.line(value, 2000)

    # ---- plumbing ---------------------------------------------------------------------------

    def starlette(self) -> Starlette:
        routes = [
            Route("/", self.home),
            Route("/favicon.ico", lambda request: Response(status_code=204)),
            Route("/pair/{code}", self.pair, methods=["GET", "POST"]),
            Route("/op/{row:int}", self.review),
            Route("/op/{row:int}/approve", self.approve_ask, methods=["POST"]),
            Route("/op/{row:int}/approve/yes", self.approve_yes, methods=["POST"]),
            Route("/op/{row:int}/decline", self.decline_ask, methods=["POST"]),
            Route("/op/{row:int}/decline/yes", self.decline_yes, methods=["POST"]),
            Route("/op/{row:int}/withdraw", self.withdraw, methods=["POST"]),
            Route("/op/{row:int}/resolve", self.resolve_ask, methods=["POST"]),
            Route("/op/{row:int}/resolve/yes", self.resolve_yes, methods=["POST"]),
            Route("/events", self.events),
            Route("/unpair", self.unpair, methods=["POST"]),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ]
        if self.passkeys is not None:
            routes += self.passkeys.routes(self)
        return Starlette(routes=routes)

    def now(self) -> datetime:
        return self.settings.clock()

    def page(self, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        template = self.templates.get_template(name)
        return HTMLResponse(template.render(**values), status_code=status)

    def device(self, request: Request) -> Device | None:
        return self.devices.device_for(request.cookies.get(COOKIE, ""))

    def not_paired(self) -> HTMLResponse:
        # Nothing about the queue, the Companies or the devices: only how to pair.
        return self.page("not_paired.html", status=403, device=None)

    def values(self, request: Request, device: Device, **more: Any) -> dict[str, Any]:
        return {
            "device": device,
            "device_name": html.plain(device.name, 60),
            "csrf": self.csrf.token(request.cookies.get(COOKIE, "")),
            "passkey": self.passkeys is not None,
            **more,
        }

    async def form(self, request: Request, device: Device | None) -> dict[str, str] | Response:
        """The form, read whole within FORM_SECONDS, its CSRF token checked (when paired)."""
        try:
            form = await asyncio.wait_for(request.form(), FORM_SECONDS)
        except BodyTooLarge:
            return _text(413, "That request is too large for this page. Nothing was changed.")
        except TimeoutError:
            return _text(408, "The request was not sent in time. Nothing was changed.")
        except ClientDisconnect:  # the device went away mid-form: nothing is decided
            return _text(400, "The connection closed before the form came. Nothing was changed.")
        fields = {key: str(value) for key, value in form.items() if isinstance(value, str)}
        if device is not None and not self.csrf.valid(
            request.cookies.get(COOKIE, ""), fields.get(CSRF_FIELD)
        ):
            return _text(
                403,
                "This form is out of date or did not come from this page (its CSRF token is "
                "missing or wrong). Reload the page and try again. Nothing was changed.",
            )
        return fields

    # ---- pairing ----------------------------------------------------------------------------

    async def pair(self, request: Request) -> Response:
        code = request.path_params["code"]
        if request.method == "GET":
            if not self.pairing_attempts.allow():
                return _text(429, "Too many pairing attempts; wait a minute.")
            if not self.devices.pairing_open(code, self.now()):
                return self.page("pair_used.html", status=410, device=None)
            return self.page("pair.html", device=None, code=code)
        form = await self.form(request, None)
        if isinstance(form, Response):
            return form
        if not self.pairing_attempts.allow():
            return _text(429, "Too many pairing attempts; wait a minute.")
        try:
            device, credential = self.devices.redeem(code, form.get("name", ""), self.now())
        except DeviceError as exc:
            if self.devices.pairing_open(code, self.now()):
                return self.page("pair.html", status=400, device=None, code=code, error=str(exc))
            return self.page("pair_used.html", status=410, device=None)
        log.warning("paired a new device %r", html.plain(device.name, 60))
        response = RedirectResponse("/passkey" if self.passkeys else "/", status_code=303)
        set_device_cookie(response, credential)
        return response

    async def unpair(self, request: Request) -> Response:
        device = self.device(request)
        if device is None:
            return self.not_paired()
        form = await self.form(request, device)
        if isinstance(form, Response):
            return form
        self.devices.revoke(device.name)
        response = self.page("not_paired.html", device=None, unpaired=True)
        clear_device_cookie(response)
        return response

    # ---- the list and the review ------------------------------------------------------------

    def _read_resource(self, row: int) -> None:
        """Read the operation's resource from the Company in the background; its commit wakes
        the live pages, which then show it (and what it says against the terms)."""
        reader = getattr(self.agent, "read_resource", None)
        if reader is None or len(self.reads) > 8:
            return
        task = asyncio.ensure_future(reader(row))
        self.reads.add(task)

        def done(finished: asyncio.Task) -> None:
            self.reads.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.warning(
                    "reading the resource of operation %s failed",
                    row,
                    exc_info=finished.exception(),
                )

        task.add_done_callback(done)

    async def home(self, request: Request) -> Response:
        device = self.device(request)
        if device is None:
            return self.not_paired()
        lists = views.inbox(self.agent.store, self.now(), self.agent.config.min_read_seconds)
        return self.page("inbox.html", **self.values(request, device, **lists))

    def _review(self, row: int, device: Device, shown: int | None = None) -> views.Review | None:
        try:
            record = self.agent.store.get_operation(row)
        except KeyError:
            return None
        revision_id = shown if shown is not None else record.current.id
        if self.arming.left(device.id, row, record.current.id) >= self.arming.delay:
            self._read_resource(row)  # first shown to this device: read the resource now
        self.arming.shown(device.id, row, record.current.id)
        return views.review(
            self.agent,
            row,
            self.now(),
            shown_revision_id=revision_id,
            arming_left=self.arming.left(device.id, row, record.current.id),
        )

    async def review(self, request: Request) -> Response:
        device = self.device(request)
        if device is None:
            return self.not_paired()
        shown = self._review(request.path_params["row"], device)
        if shown is None:
            return self.page("message.html", status=404, device=device, text=NOT_FOUND)
        notice = NOTICES.get(request.query_params.get("said", ""))
        return self.page("review.html", **self.values(request, device, r=shown, notice=notice))

    def _again(self, request: Request, device: Device, row: int, notice: str, status: int = 409):
        """The review again, with a line saying what happened (nothing changed, or why not)."""
        shown = self._review(row, device)
        if shown is None:
            return self.page("message.html", status=404, device=device, text=NOT_FOUND)
        values = self.values(request, device, r=shown, notice=notice)
        return self.page("review.html", status=status, **values)

    def _revision(self, form: dict[str, str]) -> int | None:
        try:
            return int(form.get("revision_id", ""))
        except ValueError:
            return None

    async def _decision_form(
        self, request: Request
    ) -> tuple[Device, int, dict[str, str]] | Response:
        device = self.device(request)
        if device is None:
            return self.not_paired()
        form = await self.form(request, device)
        if isinstance(form, Response):
            return form
        return device, request.path_params["row"], form

    # ---- approving ----------------------------------------------------------------------------

    async def approve_ask(self, request: Request) -> Response:
        """The confirmation, with the Company and the amount repeated (nothing is decided yet)."""
        got = await self._decision_form(request)
        if isinstance(got, Response):
            return got
        device, row, form = got
        shown = self._review(row, device, self._revision(form))
        if shown is None:
            return self.page("message.html", status=404, device=device, text=NOT_FOUND)
        if shown.blocked is not None:
            return self._again(request, device, row, not_approved_message(shown.blocked))
        if shown.unsignable:
            return self._again(request, device, row, UNSIGNABLE)
        if self.passkeys is not None and not self.devices.passkeys(device.id):
            return self._again(
                request,
                device,
                row,
                "Not yet: approving here needs a passkey, and this device has none. Add one at "
                "/passkey (declining needs none). Nothing was approved.",
            )
        return self.page(
            "confirm_approve.html",
            **self.values(request, device, r=shown, grace=self.settings.grace_seconds),
        )

    async def approve_yes(self, request: Request) -> Response:
        got = await self._decision_form(request)
        if isinstance(got, Response):
            return got
        device, row, form = got
        revision_id = self._revision(form)
        shown = self._review(row, device, revision_id)
        if shown is None:
            return self.page("message.html", status=404, device=device, text=NOT_FOUND)
        if revision_id != shown.revision_id:
            return self._again(
                request,
                device,
                row,
                "New terms arrived while you were confirming; nothing was approved.",
            )
        if shown.blocked is not None:
            return self._again(request, device, row, not_approved_message(shown.blocked))
        used_passkey = False
        if self.passkeys is not None:
            problem = self.passkeys.verify_approval(device, shown, form.get("assertion", ""))
            if problem is not None:
                return self._again(request, device, row, f"Not approved: {problem}", status=403)
            used_passkey = True
        try:
            self.agent.approve(row, revision_id)
        except Exception as exc:  # noqa: BLE001 - said on the page (StateError: expired, superseded, decided elsewhere; unsignable)
            return self._again(request, device, row, f"Not approved: {html.plain(exc)}")
        self.devices.record_decision(device.id, row, revision_id, "approve", used_passkey)
        return RedirectResponse(f"/op/{row}?said=approved", status_code=303)

    # ---- declining, withdrawing, saying what happened ---------------------------------------

    async def decline_ask(self, request: Request) -> Response:
        got = await self._decision_form(request)
        if isinstance(got, Response):
            return got
        device, row, form = got
        shown = self._review(row, device, self._revision(form))
        if shown is None:
            return self.page("message.html", status=404, device=device, text=NOT_FOUND)
        if not shown.can_decline:
            return self._again(
                request, device, row, "It is not waiting for a decision; nothing was declined."
            )
        return self.page("confirm_decline.html", **self.values(request, device, r=shown))

    async def decline_yes(self, request: Request) -> Response:
        got = await self._decision_form(request)
        if isinstance(got, Response):
            return got
        device, row, form = got
        revision_id = self._revision(form)
        if revision_id is None:
            return self._again(request, device, row, "Not declined: the form named no revision.")
        try:
            self.agent.decline(row, revision_id)
        except Exception as exc:  # noqa: BLE001 - said on the page; nothing was declined
            return self._again(request, device, row, f"Not declined: {html.plain(exc)}")
        self.devices.record_decision(device.id, row, revision_id, "decline")
        return RedirectResponse(f"/op/{row}", status_code=303)

    async def withdraw(self, request: Request) -> Response:
        got = await self._decision_form(request)
        if isinstance(got, Response):
            return got
        device, row, _form = got
        try:
            self.agent.withdraw(row)
        except Exception as exc:  # noqa: BLE001 - said on the page: too late, the first attempt started
            return self._again(request, device, row, f"Could not withdraw: {html.plain(exc)}")
        self.devices.record_decision(device.id, row, None, "withdraw")
        return RedirectResponse(f"/op/{row}", status_code=303)

    async def resolve_ask(self, request: Request) -> Response:
        got = await self._decision_form(request)
        if isinstance(got, Response):
            return got
        device, row, _form = got
        shown = self._review(row, device)
        if shown is None:
            return self.page("message.html", status=404, device=device, text=NOT_FOUND)
        if not shown.can_resolve:
            return self._again(request, device, row, "Its outcome is known; nothing was recorded.")
        return self.page("resolve.html", **self.values(request, device, r=shown))

    async def resolve_yes(self, request: Request) -> Response:
        got = await self._decision_form(request)
        if isinstance(got, Response):
            return got
        device, row, form = got
        answer = form.get("performed")
        if answer not in ("yes", "no"):
            return self._again(request, device, row, "Not recorded: the form gave no answer.")
        try:
            self.agent.resolve_unknown(row, answer == "yes")
        except Exception as exc:  # noqa: BLE001 - said on the page; nothing was recorded
            return self._again(request, device, row, f"Not recorded: {html.plain(exc)}")
        self.devices.record_decision(device.id, row, None, f"resolve:{answer}")
        return RedirectResponse(f"/op/{row}", status_code=303)

    # ---- live ---------------------------------------------------------------------------------

    async def events(self, request: Request) -> Response:
        """Server-sent events: `change` whenever anything in the store commits (the pages then
        fetch themselves again), a comment now and then to keep proxies from closing it. Ends
        when the device is revoked or the server stops."""
        device = self.device(request)
        if device is None:
            return self.not_paired()
        if (
            sum(self.streams.values()) >= MAX_STREAMS
            or self.streams.get(device.id, 0) >= MAX_STREAMS_PER_DEVICE
        ):
            return _text(503, "Too many live pages are open; close some.", retry=True)
        self.streams[device.id] = self.streams.get(device.id, 0) + 1
        return StreamingResponse(self._stream(request, device), media_type="text/event-stream")

    async def _stream(self, request: Request, device: Device) -> AsyncIterator[bytes]:
        store = self.agent.store
        try:
            seen = store.change_token()
            yield b"retry: 1000\n\nevent: hello\ndata: 0\n\n"
            quiet = 0.0
            while not self.stopping.is_set():
                await asyncio.sleep(LIVE_POLL_SECONDS)
                if not self.devices.is_active(device.id):
                    yield b"event: revoked\ndata: 0\n\n"
                    return
                token = store.change_token()
                if token != seen:
                    seen = token
                    quiet = 0.0
                    yield b"event: change\ndata: 1\n\n"
                else:
                    quiet += LIVE_POLL_SECONDS
                    if quiet >= STREAM_KEEPALIVE_SECONDS:
                        quiet = 0.0
                        yield b": still here\n\n"
        finally:
            left = self.streams.get(device.id, 1) - 1
            if left > 0:
                self.streams[device.id] = left
            else:
                self.streams.pop(device.id, None)


NOT_FOUND = "That operation is not in the store."
UNSIGNABLE = (
    "Can't approve: approvals can't be signed on this machine (the banner above says why and how "
    "to fix it). Nothing was approved."
)
NOTICES = {
    "approved": "Approved. It is sent when the countdown above ends; until then you can withdraw.",
    "changed": "It changed while you were confirming; nothing was decided. Read it again.",
}


def _text(status: int, message: str, retry: bool = False) -> Response:
    headers = {"retry-after": "5"} if retry else None
    return Response(message + "\n", status_code=status, media_type="text/plain", headers=headers)


def build(agent: Any, devices: DeviceBook, settings: Settings) -> tuple[WebApp, Starlette]:
    web = WebApp(agent, devices, settings)
    return web, web.starlette()


__all__ = ["Settings", "WebApp", "build"]
