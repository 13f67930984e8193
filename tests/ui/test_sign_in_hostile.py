"""The sign-in dialog against hostile Companies (tests/companies/signin_company.py), at 80x24: where
a secret goes is shown as the browser reads it, before anything is typed; links and pages on other
sites are withheld; secrets stay secret whatever the Company declares."""

from __future__ import annotations

import contextlib

import pytest
from textual.widgets import Input, Static

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.signin import flows
from poppy_tui.agent.store.sign_ins import get_sign_in
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.signin import SignInScreen, open_sign_in
from tests.companies.signin_company import (
    DISGUISED_SECRETS,
    EMAIL_FIELD,
    LOOKALIKE,
    LOOKALIKE_ASCII,
    TRICK_LINKS,
    careless_secrets,
    lookalike_shop,
    parser_trickster,
    started_companies,
    suffix_claimer,
)
from tests.keyring_support import memory_keyring  # noqa: F401 (autouse: refresh tokens kept in memory)
from tests.ui.ui_sample import record_notifications, wait_for

SIZE = (80, 24)
PASSWORD = "hunter2-correct-horse"


@pytest.fixture
def hostile():
    with started_companies() as start:
        yield start


@pytest.fixture
def agent(tmp_path):
    opened = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        Config(grace_seconds=0.0, request_timeout_seconds=5.0),
    )
    yield opened
    opened.store.close()


def _text(screen) -> str:
    return "\n".join(str(w.render()) for w in screen.query(Static))


def _raw_free(app) -> None:
    """Nothing the Company sent reaches the terminal raw: no escape or control characters in what
    the dialog renders or in a toast."""
    shown = _text(app.screen) + "".join(app.said_toasts)
    assert not any(ord(c) < 32 and c != "\n" for c in shown) and "\x7f" not in shown


@contextlib.asynccontextmanager
async def sign_in_dialog(agent, company, kind: str):
    """The TUI at SIZE with `company` added and its sign-in dialog of `kind` open: (app, pilot,
    dialog). What toasts say is kept in app.said_toasts, read without Textual's internals."""
    app = PoppyApp(agent)
    app.said_toasts = record_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        record = await agent.add_company(company.base_url)
        open_sign_in(app, record.id, kind=kind)
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SignInScreen) and app.screen.query("#sign-in-status"),
        )
        yield app, pilot, app.screen


async def test_a_look_alike_endpoint_is_shown_by_its_ascii_form_before_anything_is_typed(
    agent, hostile
):
    company = hostile(lookalike_shop())
    async with sign_in_dialog(agent, company, "mediated") as (app, pilot, dialog):
        await wait_for(
            pilot, lambda: dialog.query("#sign-in-field-0"), describe=lambda: _text(dialog)
        )
        text = _text(dialog)
        assert f"Sent once to Shop Test at {LOOKALIKE_ASCII} ⚠ look-alike address" in text
        assert "look-alike address: its name mixes letters from different alphabets" in text
        assert LOOKALIKE not in text
        assert all(not w.value for w in dialog.query(Input))  # shown before anything was typed
        _raw_free(app)


async def test_a_look_alike_device_link_is_shown_by_its_ascii_form_and_marked(agent, hostile):
    company = hostile(lookalike_shop())
    async with sign_in_dialog(agent, company, "device") as (app, pilot, dialog):
        await wait_for(pilot, lambda: dialog.query("#sign-in-link"), describe=lambda: _text(dialog))
        text = _text(dialog)
        assert f"https://{LOOKALIKE_ASCII}/verify" in text and "look-alike address" in text
        assert LOOKALIKE not in text


@pytest.mark.parametrize(
    "trick", ["backslash", "userinfo", "tab and newline", "percent-encoded host"]
)
async def test_a_device_link_a_browser_opens_elsewhere_is_withheld(agent, hostile, trick):
    company = hostile(parser_trickster("device", TRICK_LINKS[trick]))
    async with sign_in_dialog(agent, company, "device") as (app, pilot, dialog):
        await wait_for(pilot, lambda: dialog.query("#sign-in-code"), describe=lambda: _text(dialog))
        text = _text(dialog)
        assert "outside its own domain, so it is not shown" in text and "WDJB-MJHT" in text
        assert not dialog.query("#sign-in-link") and "evil" not in text and "verify" not in text
        _raw_free(app)


async def test_a_direct_page_under_a_claimed_public_suffix_is_neither_opened_nor_shown(
    agent, hostile, monkeypatch
):
    opened: list[str] = []
    monkeypatch.setattr(flows, "_open_in_browser", lambda url: opened.append(url) or True)
    company = hostile(suffix_claimer("direct", "https://login.evil.test/authorize"))
    async with sign_in_dialog(agent, company, "direct") as (app, pilot, dialog):
        status = dialog.query_one("#sign-in-status", Static)
        await wait_for(
            pilot,
            lambda: "outside its own domains" in str(status.render()),
            describe=lambda: _text(dialog),
        )
        assert "login.evil.test" in str(status.render())
        assert not opened and not dialog.query("#sign-in-link")


async def test_credentials_for_another_site_are_not_asked_for(agent, hostile):
    company = hostile(suffix_claimer("mediated"))
    async with sign_in_dialog(agent, company, "mediated") as (app, pilot, dialog):
        status = dialog.query_one("#sign-in-status", Static)
        await wait_for(
            pilot,
            lambda: "won't ask for your credentials" in str(status.render()),
            describe=lambda: _text(dialog),
        )
        assert not dialog.query(Input)


async def test_passwords_and_codes_declared_not_secret_are_masked_and_never_kept(agent, hostile):
    company = hostile(careless_secrets(fields=[*DISGUISED_SECRETS[:4], EMAIL_FIELD]))
    async with sign_in_dialog(agent, company, "mediated") as (app, pilot, dialog):
        await wait_for(
            pilot, lambda: dialog.query("#sign-in-field-4"), describe=lambda: _text(dialog)
        )
        inputs = list(dialog.query(".sign-in-field").results(Input))
        assert [i.password for i in inputs] == [True, True, True, True, False]
        assert _text(dialog).count("hidden, not kept") == 4
        for index, widget in enumerate(inputs[:4]):
            widget.focus()
            await pilot.press(*f"{PASSWORD}{index}")
        inputs[4].focus()
        await pilot.press(*"ada@shop.test")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, SignInScreen), describe=lambda: _text(dialog)
        )
        said = list(app.said_toasts)
        assert any("Signed in to Shop Test as ada@shop.test" in m for m in said), said
        assert not any(PASSWORD in m for m in said)
        record = get_sign_in(agent.store, (await agent.add_company(company.base_url)).id)
        assert record is not None and record.account == "ada@shop.test"
        assert PASSWORD.encode() not in (agent.paths.data_dir / "poppy.db").read_bytes()


async def test_credentials_quoted_back_are_not_shown(agent, hostile):
    company = hostile(careless_secrets(echo=True))
    async with sign_in_dialog(agent, company, "mediated") as (app, pilot, dialog):
        await wait_for(
            pilot, lambda: dialog.query("#sign-in-field-1"), describe=lambda: _text(dialog)
        )
        await pilot.press(*"ada@shop.test", "enter", *PASSWORD, "enter")
        status = dialog.query_one("#sign-in-status", Static)
        await wait_for(
            pilot,
            lambda: "did not sign you in" in str(status.render()),
            describe=lambda: _text(dialog),
        )
        assert "password=•••" in str(status.render())
        assert PASSWORD not in _text(dialog) and not any(PASSWORD in m for m in app.said_toasts)


async def test_the_one_time_code_is_masked(agent, hostile):
    script = careless_secrets()
    script.needs_code = True
    company = hostile(script)
    async with sign_in_dialog(agent, company, "mediated") as (app, pilot, dialog):
        await wait_for(
            pilot, lambda: dialog.query("#sign-in-field-1"), describe=lambda: _text(dialog)
        )
        await pilot.press(*"ada@shop.test", "enter", *PASSWORD, "enter")
        await wait_for(
            pilot, lambda: dialog.query("#sign-in-code-input"), describe=lambda: _text(dialog)
        )
        assert dialog.query_one("#sign-in-code-input", Input).password


async def test_a_program_squatting_the_identity_port_is_not_believed(tmp_path, hostile):
    """The TUI's agent finds its recorded identity port held by a program serving another key: it
    signs in from another port (recorded), never vouching for the squatter's key."""
    from urllib.parse import parse_qs, urlsplit

    from cryptography.hazmat.primitives.asymmetric import ec

    from poppy_tui.agent.identity.settings import (
        development_settings,
        free_loopback_port,
        read_settings,
        write_settings,
    )
    from poppy_tui.protocol.client_metadata import jwks_document
    from tests.companies.port_squatter import PortSquatter

    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    port = free_loopback_port()
    settings = write_settings(paths, development_settings(port))
    squatter = PortSquatter(
        port,
        {
            urlsplit(settings.client_id).path: settings.metadata(),
            urlsplit(settings.jwks_uri).path: jwks_document(
                [ec.generate_private_key(ec.SECP256R1()).public_key()]
            ),
        },
    )
    agent = Agent.open(paths, Config(grace_seconds=0.0, request_timeout_seconds=5.0))
    company = hostile(careless_secrets())
    try:
        async with sign_in_dialog(agent, company, "device") as (app, pilot, dialog):
            await wait_for(
                pilot, lambda: dialog.query("#sign-in-code"), describe=lambda: _text(dialog)
            )
            assert "WDJB-MJHT" in _text(dialog)
    finally:
        squatter.stop()
        agent.store.close()
    assert urlsplit(settings.jwks_uri).path in squatter.requests
    moved = read_settings(paths)
    assert moved is not None and moved.loopback_port != port
    [(_, form)] = [entry for entry in company.received if entry[0] == "device_authorization"]
    assert parse_qs(form)["client_id"] == [moved.client_id]
