"""The sign-in flows against hostile Companies (tests/companies/signin_company.py): links, pages and
endpoints read as a browser reads them before the own-domain check, look-alike endpoints shown by
their ASCII form, and secrets kept secret whatever `secret` says."""

from __future__ import annotations

import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.signin.errors import SignInError
from poppy_tui.agent.signin.flows import CodeRequired
from poppy_tui.agent.store.sign_ins import get_sign_in

from tests.companies.signin_company import (
    DISGUISED_SECRETS,
    LOOKALIKE,
    LOOKALIKE_ASCII,
    TRICK_LINKS,
    SignInCompany,
    careless_secrets,
    lookalike_shop,
    parser_trickster,
    started_companies,
    suffix_claimer,
)


@pytest.fixture
def hostile():
    with started_companies() as start:
        yield start


@pytest.fixture
async def agent(tmp_path):
    opened = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        Config(grace_seconds=0.0, request_timeout_seconds=5.0),
    )
    yield opened
    await opened.aclose()


async def _begin(agent, company: SignInCompany, kind: str):
    record = await agent.add_company(company.base_url)
    return await agent.signins.begin(record, kind)


class NoSleep:
    async def __call__(self, seconds: float) -> None:
        return None


# ---- links and pages on another site ------------------------------------------------------------


@pytest.mark.parametrize("trick", sorted(TRICK_LINKS))
async def test_a_device_link_a_browser_opens_elsewhere_is_withheld(agent, hostile, trick):
    company = hostile(parser_trickster("device", TRICK_LINKS[trick]))
    flow = await _begin(agent, company, "device")
    await flow.start()
    assert flow.link is None and flow.user_code == "WDJB-MJHT"


async def test_a_device_link_under_a_public_suffix_the_company_claims_is_withheld(agent, hostile):
    company = hostile(suffix_claimer("device"))
    flow = await _begin(agent, company, "device")
    await flow.start()
    assert flow.link is None


async def test_an_own_device_link_is_shown_as_the_browser_loads_it(agent, hostile):
    company = hostile(parser_trickster("device", "HTTPS://Login.SHOP.test/ver\tify"))
    flow = await _begin(agent, company, "device")
    await flow.start()
    assert flow.link == "https://login.shop.test/verify"


@pytest.mark.parametrize("trick", ["tab and newline", "trailing dot", "capitals"])
async def test_a_direct_sign_in_page_a_browser_opens_elsewhere_is_neither_opened_nor_shown(
    agent, hostile, trick
):
    opened: list[str] = []
    company = hostile(parser_trickster("direct", TRICK_LINKS[trick]))
    record = await agent.add_company(company.base_url)
    flow = await agent.signins.begin(record, "direct", open_browser=opened.append)
    with pytest.raises(SignInError, match="outside its own domains") as refused:
        await flow.start()
    assert "evil.test" in str(refused.value) and not opened and flow.authorize_url is None


@pytest.mark.parametrize("trick", ["backslash", "userinfo", "percent-encoded host"])
async def test_a_direct_page_urllib_reads_as_ours_is_refused_before_sign_in(agent, hostile, trick):
    # The authorization server's metadata itself is refused (issuer binding), so nothing opens.
    opened: list[str] = []
    company = hostile(parser_trickster("direct", TRICK_LINKS[trick]))
    record = await agent.add_company(company.base_url)
    with pytest.raises(SignInError):  # noqa: PT012 - refused when it begins or when it starts
        flow = await agent.signins.begin(record, "direct", open_browser=opened.append)
        await flow.start()
    assert not opened


async def test_a_direct_page_under_a_claimed_public_suffix_is_refused(agent, hostile):
    company = hostile(suffix_claimer("direct", "https://login.evil.co.uk/authorize"))
    record = await agent.add_company(company.base_url)
    flow = await agent.signins.begin(record, "direct", open_browser=lambda url: True)
    with pytest.raises(SignInError, match="login.evil.co.uk, outside its own domains"):
        await flow.start()


@pytest.mark.parametrize(
    "script",
    [
        suffix_claimer("mediated"),
        parser_trickster("mediated", TRICK_LINKS["tab and newline"]),
        parser_trickster("mediated", TRICK_LINKS["trailing dot"]),
    ],
    ids=["public suffix", "tab and newline", "trailing dot"],
)
async def test_credentials_are_never_asked_for_another_site(agent, hostile, script):
    company = hostile(script)
    with pytest.raises(SignInError, match="won't ask for your credentials"):
        await _begin(agent, company, "mediated")
    assert not any(what == "sign-in" for what, _ in company.received)


async def test_a_look_alike_endpoint_is_shown_by_its_ascii_form(agent, hostile):
    company = hostile(lookalike_shop())
    flow = await _begin(agent, company, "mediated")
    assert flow.endpoint_host == LOOKALIKE_ASCII
    shown = flow.endpoint_shown
    assert shown.lookalike and LOOKALIKE not in shown.line and LOOKALIKE_ASCII in shown.line


async def test_a_look_alike_device_link_is_shown_and_marked(agent, hostile):
    company = hostile(lookalike_shop())
    flow = await _begin(agent, company, "device")
    await flow.start()
    assert flow.link == f"https://{LOOKALIKE_ASCII}/verify"
    assert flow.link_host is not None and flow.link_host.lookalike


# ---- secrets whatever the Company declares ----------------------------------------------------------


async def test_a_password_declared_not_secret_is_neither_kept_nor_the_account(agent, hostile):
    company = hostile(
        careless_secrets(
            fields=[
                {
                    "name": "password",
                    "label": "Password",
                    "secret": False,
                },  # first: the old "account" pick
                {"name": "email", "label": "Email", "secret": False},
            ]
        )
    )
    flow = await _begin(agent, company, "mediated")
    assert [f.secret for f in flow.fields] == [True, False]
    grant = await flow.submit({"password": "hunter2-hunter2", "email": "ada@shop.test"})
    assert grant.account == "ada@shop.test"
    record = get_sign_in(agent.store, (await agent.add_company(company.base_url)).id)
    assert record is not None and record.account == "ada@shop.test"
    assert b"hunter2" not in (agent.paths.data_dir / "poppy.db").read_bytes()


async def test_with_no_account_identifier_nothing_is_kept_as_the_account(agent, hostile):
    company = hostile(careless_secrets(fields=DISGUISED_SECRETS[:3]))
    flow = await _begin(agent, company, "mediated")
    assert all(f.secret and not f.account for f in flow.fields)
    grant = await flow.submit({f.name: f"value-{i}-secret" for i, f in enumerate(flow.fields)})
    assert grant.account is None


async def test_credentials_quoted_back_by_the_company_are_not_shown(agent, hostile):
    company = hostile(careless_secrets(echo=True))
    flow = await _begin(agent, company, "mediated")
    with pytest.raises(SignInError) as failed:
        await flow.submit({"email": "ada@shop.test", "password": "hunter2-hunter2"})
    assert "hunter2" not in str(failed.value) and "ada@shop.test" in str(failed.value)


async def test_a_one_time_code_quoted_back_is_not_shown(agent, hostile):
    script = careless_secrets()
    script.needs_code = True
    company = hostile(script)
    flow = await _begin(agent, company, "mediated")
    step = await flow.submit({"email": "ada@shop.test", "password": "hunter2-hunter2"})
    assert isinstance(step, CodeRequired)
    company.script.echo_credentials = True
    with pytest.raises(SignInError) as failed:
        await flow.submit_code("913370")
    assert "913370" not in str(failed.value)
