"""A token the Company hands out is checked when it arrives, on every way one arrives (Device,
Direct and Mediated Sign-In, and a refresh): an access token goes out in `Authorization: Bearer`,
so it must be an RFC 6750 b64token; a refresh token must be RFC 6749 VSCHARs; the token type must
be Bearer. A bad one is refused with one line naming the Company, never the token."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from poppy_tui.agent.signin.errors import SignInError
from poppy_tui.protocol.header_values import (
    MAX_TOKEN_LENGTH,
    entity_tag,
    is_bearer_token,
    is_refresh_token,
)

from spec_auth_server import USER

BAD_ACCESS_TOKENS = {
    "line feed": ("abc\ndef", "line break"),
    "carriage return": ("abc\rX-Injected: 1", "line break"),
    "space": ("abc def", "space"),
    "tab": ("abc\tdef", "control character"),
    "NUL": ("abc\x00def", "control character"),
    "DEL": ("abc\x7fdef", "control character"),
    "non-ASCII": ("abc\u00e9def", "beyond ASCII"),
    "emoji": ("abc\U0001f600", "beyond ASCII"),
    "comma": ("abc,def", "b64token"),
    "padding inside": ("ab=cd", "b64token"),
    "too long": ("a" * (MAX_TOKEN_LENGTH + 1), "longer than"),
}


@pytest.mark.parametrize(
    ("token", "ok"),
    [
        ("mF_9.B5f-4.1JqM", True),  # RFC 6750's own example
        ("abc+/~==", True),
        ("a" * MAX_TOKEN_LENGTH, True),
        ("", False),
        ("==", False),
        *[(value, False) for value, _ in BAD_ACCESS_TOKENS.values()],
    ],
)
def test_bearer_token_grammar(token, ok):
    assert is_bearer_token(token) is ok


@pytest.mark.parametrize(
    ("token", "ok"),
    [
        ("tGzv3JOkF0XG5Qx2TlKWIA", True),
        ("with a space", True),
        ("a\nb", False),
        ("a\x00b", False),
        ("\u00e9", False),
        ("", False),
        ("a" * (MAX_TOKEN_LENGTH + 1), False),
    ],
)
def test_refresh_token_grammar(token, ok):
    assert is_refresh_token(token) is ok


@pytest.mark.parametrize(
    ("tag", "kept"),
    [
        ('"xyzzy"', True),
        ('W/"xyzzy"', True),
        ('""', True),
        ("xyzzy", False),
        ('"a b"', False),
        ('"\u00e9"', False),
        ('"a"\r\n', False),
        (None, False),
        (7, False),
    ],
)
def test_entity_tag_grammar(tag, kept):
    assert entity_tag(tag) == (tag if kept else None)


# ---- every sign-in flow --------------------------------------------------------------------------


class Sleeps:
    async def __call__(self, seconds: float) -> None:
        pass


async def _device(setup):
    flow = await setup.signins.begin(setup.company, "device", sleep=Sleeps())
    await flow.start()
    async with httpx.AsyncClient(trust_env=False) as browser:
        user_code = parse_qs(urlsplit(flow.link).query)["user_code"][0]
        await browser.post(flow.link.split("?")[0], data=setup.auth.approve_device_form(user_code))
    return await flow.wait()


async def _direct(setup):
    flow = await setup.signins.begin(setup.company, "direct", open_browser=lambda url: None)
    url = await flow.start(open_browser=False)
    async with httpx.AsyncClient(trust_env=False, follow_redirects=False) as browser:
        params = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        form = params | {"email": USER["email"], "password": USER["password"], "decision": "allow"}
        answer = await browser.post(url.split("?")[0], data=form)
    return await flow.complete(answer.headers["location"])


async def _mediated(setup):
    flow = await setup.signins.begin(setup.company, "mediated")
    return await flow.submit({"email": USER["email"], "password": USER["password"]})


FLOWS = {"device": _device, "direct": _direct, "mediated": _mediated}


def _one_line_naming_the_company(message: str, token: str) -> None:
    assert "\n" not in message and "\r" not in message
    assert "Juniper Outfitters" in message
    assert token not in message


@pytest.mark.parametrize("flow", list(FLOWS))
@pytest.mark.parametrize("case", list(BAD_ACCESS_TOKENS))
async def test_a_bad_access_token_is_refused_at_sign_in(setup, flow, case):
    token, why = BAD_ACCESS_TOKENS[case]
    setup.auth.token_answer = {"access_token": token}
    with pytest.raises(SignInError) as caught:
        await FLOWS[flow](setup)
    message = str(caught.value)
    _one_line_naming_the_company(message, token)
    assert "access_token" in message and why in message
    assert setup.signins.status(setup.company) is None  # not signed in
    assert setup.signins.vault.access(setup.auth.issuer) is None


@pytest.mark.parametrize("flow", list(FLOWS))
@pytest.mark.parametrize(
    ("members", "field"),
    [
        ({"refresh_token": "r\r\nX-Injected: 1"}, "refresh_token"),
        ({"refresh_token": "r\u00e9"}, "refresh_token"),
        ({"refresh_token": "r\x00"}, "refresh_token"),
        ({"token_type": "Bearer\r\n"}, "token_type"),
        ({"token_type": "B\u00e9arer"}, "token_type"),
        ({"token_type": "mac"}, "token_type"),
        ({"token_type": None}, "token_type"),
    ],
)
async def test_a_bad_refresh_token_or_token_type_is_refused_at_sign_in(setup, flow, members, field):
    setup.auth.token_answer = members
    with pytest.raises(SignInError) as caught:
        await FLOWS[flow](setup)
    message = str(caught.value)
    _one_line_naming_the_company(message, "X-Injected")
    assert field in message
    assert setup.signins.status(setup.company) is None


async def test_a_bearer_token_with_legal_odd_characters_signs_in(setup):
    setup.auth.token_answer = {"access_token": "mF_9.B5f-4.1JqM+/~==", "token_type": "bearer"}
    grant = await _mediated(setup)
    assert grant.kind == "mediated"
    assert await setup.signins.access_token(setup.company) == "mF_9.B5f-4.1JqM+/~=="


@pytest.mark.parametrize("case", ["line feed", "NUL", "non-ASCII", "space", "too long"])
async def test_a_bad_access_token_from_a_refresh_is_not_used(setup, case, caplog):
    token, _ = BAD_ACCESS_TOKENS[case]
    setup.auth.access_lifetime = 30  # inside the refresh margin: the next use refreshes
    await _mediated(setup)
    first = setup.signins.vault.access(setup.auth.issuer).token
    setup.auth.token_answer = {"access_token": token}
    used = await setup.signins.access_token(setup.company)
    assert used == first  # the unexpired token it had, never the bad one
    assert any(s.path == "/oauth/token" and b"refresh_token" in s.body for s in setup.auth.received)
    assert all(token not in record.getMessage() for record in caplog.records)


async def test_a_huge_expires_in_is_a_long_life_not_a_crash(setup):
    import time

    from poppy_tui.protocol.signin import MAX_EXPIRES_IN_SECONDS

    setup.auth.token_answer = {"expires_in": 10**400}
    began = time.time()
    grant = await _mediated(setup)
    assert grant.kind == "mediated"
    first = await setup.signins.access_token(setup.company)
    assert first
    # A long life, bounded: ten years from the sign-in, not 10**400 seconds (nor a crash).
    kept = setup.signins.vault.access(setup.signins.status(setup.company).issuer)
    assert kept is not None and kept.token == first
    assert began + MAX_EXPIRES_IN_SECONDS <= kept.expires_at <= time.time() + MAX_EXPIRES_IN_SECONDS
    # So it is used as it is, a year from now too: no refresh (the refresh token is not spent).
    assert kept.fresh(60, now=time.time() + 365 * 86400)
    assert await setup.signins.access_token(setup.company) == first
    assert not any(g.revoked for g in setup.auth.grants.values())


@pytest.mark.parametrize(
    "stored", ["r\r\nX-Injected: 1", "r\u00e9\u2603", "r\x00", "r" * (MAX_TOKEN_LENGTH + 10)]
)
async def test_a_bad_refresh_token_stored_by_an_older_version_is_not_sent(
    setup, memory_keyring, stored, caplog
):
    from poppy_tui.agent.keys import KEYRING_SERVICE
    from poppy_tui.agent.signin.vault import REFRESH_TOKEN_USERNAME

    setup.auth.access_lifetime = 30  # due for a refresh at once
    await _mediated(setup)
    memory_keyring.secrets[
        (KEYRING_SERVICE, REFRESH_TOKEN_USERNAME.format(issuer=setup.auth.issuer))
    ] = stored
    before = len(setup.auth.received)
    token = await setup.signins.access_token(setup.company)
    assert token == setup.signins.vault.access(setup.auth.issuer).token  # the unexpired one it had
    assert not any(
        s.path == "/oauth/token" for s in setup.auth.received[before:]
    )  # nothing sent with it
    assert all(stored not in record.getMessage() for record in caplog.records)
