"""Every answer from an authorization server is read bounded, in size and in time, like the rest
of the agent's fetches: oversized, inflating (gzip) and trickled answers from the device
authorization, token and revocation endpoints of the spec-written server on loopback end in one
line naming the server, and nothing of them is used."""

from __future__ import annotations

from dataclasses import replace

import pytest

from poppy_tui.agent.signin.errors import SignInError
from poppy_tui.agent.signin.flows import MAX_SIGNIN_ANSWER_BYTES
from poppy_tui.agent.signin.service import SignIns

from spec_auth_server import USER


class NoSleep:
    async def __call__(self, seconds: float) -> None:
        pass


def too_large(setup) -> str:
    return f"gave an answer too large to read: {setup.auth.domain} sent more than the {MAX_SIGNIN_ANSWER_BYTES:,} bytes"


def quick_signins(setup) -> SignIns:
    """The agent's sign-ins with a 1 s read timeout: an overall deadline of 2 s per answer."""
    return SignIns(
        setup.agent.store,
        replace(setup.agent.config, request_timeout_seconds=1.0),
        lambda: setup.identity,
        setup.agent._http,
    )


@pytest.mark.parametrize("kind", ["huge", "bomb"])
async def test_an_oversized_device_authorization_answer_is_refused(setup, kind):
    setup.auth.oversized["device"] = (
        kind  # a valid answer, padded to 2 MB (streamed, or gzipped small)
    )
    flow = await setup.signins.begin(setup.company, "device", sleep=NoSleep())
    with pytest.raises(SignInError) as failure:
        await flow.start()
    message = str(failure.value)
    assert "device authorization endpoint" in message and too_large(setup) in message
    assert "\n" not in message
    assert flow.authorization is None and flow.user_code == ""  # nothing of it is shown
    assert setup.signins.status(setup.company) is None


@pytest.mark.parametrize("kind", ["huge", "bomb"])
async def test_an_oversized_token_answer_ends_the_device_poll(setup, kind):
    flow = await setup.signins.begin(setup.company, "device", sleep=NoSleep())
    await flow.start()
    # A valid "authorization_pending" padded to 2 MB: read in full, it would keep the poll going.
    setup.auth.oversized["token"] = kind
    with pytest.raises(SignInError) as failure:
        await flow.wait()
    message = str(failure.value)
    assert "token endpoint" in message and too_large(setup) in message and "\n" not in message
    assert (
        len([s for s in setup.auth.received if s.path == "/oauth/token"]) == 1
    )  # not polled again
    assert setup.signins.status(setup.company) is None


async def test_a_trickled_device_authorization_answer_is_abandoned_naming_the_server(setup):
    setup.auth.trickle["device"] = 0.3  # a byte inside every 1 s read timeout, never done in 2 s
    flow = await quick_signins(setup).begin(setup.company, "device", sleep=NoSleep())
    with pytest.raises(SignInError) as failure:
        await flow.start()
    message = str(failure.value)
    assert "device authorization endpoint" in message
    assert (
        f"no complete answer within 2 s from {setup.auth.domain}" in message and "\n" not in message
    )
    assert flow.authorization is None


@pytest.mark.parametrize("hostile", ["huge", "trickle"])
async def test_sign_out_with_a_hostile_revocation_answer_still_forgets_the_tokens(setup, hostile):
    signins = quick_signins(setup)
    flow = await signins.begin(setup.company, "mediated")
    await flow.submit({"email": USER["email"], "password": USER["password"]})
    if hostile == "huge":
        setup.auth.oversized["revoke"] = "huge"
    else:
        setup.auth.trickle["revoke"] = 0.3
    result = await signins.sign_out(setup.company)
    assert result.was_signed_in and not result.revoked
    assert "revocation endpoint" in result.detail and setup.auth.domain in result.detail
    assert (
        too_large(setup) if hostile == "huge" else "no complete answer within 2 s"
    ) in result.detail
    assert signins.status(setup.company) is None  # signed out here whatever the server did


async def test_an_oversized_refresh_answer_is_not_used(setup):
    setup.auth.access_lifetime = 30  # due for refresh, still usable
    flow = await setup.signins.begin(setup.company, "mediated")
    await flow.submit({"email": USER["email"], "password": USER["password"]})
    first = setup.signins.vault.access(setup.auth.issuer).token
    setup.auth.oversized["refresh"] = "bomb"  # new tokens, valid, inflating to 2 MB
    assert (
        await setup.signins.access_token(setup.company) == first
    )  # the padded tokens were not taken
    assert setup.signins.vault.access(setup.auth.issuer).token == first
    assert any(s.path == "/oauth/token" for s in setup.auth.received)  # it did ask
    assert setup.signins.status(setup.company) is not None
