"""`poppy-tui web --require-passkey` in Chromium with its virtual authenticator (CTAP2, internal,
user verification): served and paired as localhost; a passkey added after pairing; an approval
that goes only with a user-verified assertion over a challenge bound to that operation and
revision; declining without one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from poppy_tui.agent.paired_devices import DeviceBook
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status
from tests.web.browser_support import browser, needs_chromium, press, text, wait
from tests.web.web_support import WebServer, new_link, queue_cancel, running_web, status_of

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def guarded(web_home, tmp_path_factory) -> Iterator[WebServer]:
    with running_web(
        web_home, tmp_path_factory.mktemp("passkey-logs"), "--require-passkey"
    ) as server:
        yield server


@pytest.fixture(scope="module")
def laptop(guarded, web_home) -> Iterator[object]:
    from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions

    driver = browser(size=(1024, 900))
    options = VirtualAuthenticatorOptions()
    options.protocol = VirtualAuthenticatorOptions.Protocol.CTAP2
    options.transport = VirtualAuthenticatorOptions.Transport.INTERNAL
    options.has_resident_key = True
    options.has_user_verification = True
    options.is_user_verified = True
    driver.add_virtual_authenticator(options)
    pair_with_a_passkey(driver, web_home)
    yield driver
    driver.quit()


def pair_with_a_passkey(driver, home) -> None:
    """Paired through the page as `localhost`, then a passkey added: what the person does first
    (in the fixture, so each test finds the laptop ready in whatever order the tests run)."""
    from selenium.webdriver.common.by import By

    link = new_link(home)
    assert link.startswith("http://localhost:")
    driver.get(link)
    driver.find_element(By.ID, "name").send_keys("laptop")
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(driver, lambda d: "A passkey for approvals" in text(d), "the passkey page")
    press(driver, "passkey-add")
    wait(driver, lambda d: "Waiting for you" in text(d), "the list once the passkey is added")


def confirm_page(driver, server, row: int) -> None:
    driver.get(f"{server.url}/op/{row}")
    wait(driver, lambda d: "Summary — written by the Company" in text(d), "the review")
    press(driver, "approve")
    wait(driver, lambda d: "Approve this operation?" in text(d), "the confirmation")


def test_pair_and_add_a_passkey_on_localhost(guarded, web_home, laptop):
    # The fixture paired the laptop and added its passkey through the page (pair_with_a_passkey).
    assert guarded.url.startswith("http://localhost:")
    assert len(laptop.get_credentials()) == 1  # the authenticator holds it; we keep its public key
    with DeviceBook.open(resolve_paths(web_home).data_dir) as book:
        device = next(d for d in book.devices() if d.name == "laptop")
        assert len(book.passkeys(device.id)) == 1


def test_an_approval_goes_with_a_user_verified_passkey(guarded, web_home, travel, laptop):
    row = queue_cancel(web_home, travel, "Nazaré, 2 nights")
    confirm_page(laptop, guarded, row)
    assert "Your passkey is asked for" in text(laptop)
    press(laptop, "confirm-approve")
    wait(laptop, lambda d: "APPROVED — sending in" in text(d), "the approval")
    assert status_of(web_home, row) == Status.APPROVED
    with DeviceBook.open(resolve_paths(web_home).data_dir) as book:
        device = next(d for d in book.devices() if d.name == "laptop")
        assert (row, "approve") in book.decisions_by(device.id)


def test_no_approval_without_the_passkey_or_with_another_operations(
    guarded, web_home, travel, laptop
):
    first = queue_cancel(web_home, travel, "Óbidos, 1 night")
    second = queue_cancel(web_home, travel, "Peniche, 1 night")
    # The form sent without the passkey step (as with script off): refused, nothing approved.
    confirm_page(laptop, guarded, second)
    laptop.execute_script(
        "const f = document.getElementById('approve-form'); f.dataset.signed = '1'; f.submit();"
    )
    wait(laptop, lambda d: "Not approved: this page asks for your passkey first" in text(d), "no")
    assert status_of(web_home, second) == Status.PENDING
    # An assertion made for the first operation, sent with the second's approval: refused.
    confirm_page(laptop, guarded, second)
    first_revision = _revision(web_home, first)
    laptop.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const form = document.getElementById('approve-form');
        const b64 = (t) => Uint8Array.from(atob(t.replace(/-/g, '+').replace(/_/g, '/')
            + '==='.slice((t.length + 3) % 4)), (c) => c.charCodeAt(0));
        const out = (b) => btoa(String.fromCharCode(...new Uint8Array(b)))
            .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
        fetch('/op/"""
        + str(first)
        + """/passkey/options', {method: 'POST',
            headers: {'content-type': 'application/json', 'x-csrf-token': form.elements.csrf.value},
            body: JSON.stringify({revision_id: '"""
        + str(first_revision)
        + """'})})
          .then((r) => r.json())
          .then((o) => navigator.credentials.get({publicKey: {challenge: b64(o.challenge),
              rpId: o.rpId, userVerification: 'required',
              allowCredentials: o.allowCredentials.map((c) => ({type: 'public-key', id: b64(c.id)}))}}))
          .then((c) => {
            form.elements.assertion.value = JSON.stringify({id: c.id, rawId: out(c.rawId),
              type: c.type, response: {clientDataJSON: out(c.response.clientDataJSON),
              authenticatorData: out(c.response.authenticatorData),
              signature: out(c.response.signature), userHandle: null}});
            form.dataset.signed = '1'; form.submit(); done(true);
          }).catch((e) => done(String(e)));
        """
    )
    wait(
        laptop,
        lambda d: "the passkey step was for another operation or revision" in text(d),
        "the refusal of another operation's assertion",
    )
    assert status_of(web_home, second) == Status.PENDING
    assert status_of(web_home, first) == Status.PENDING
    # Without user verification the browser's passkey step fails: nothing is approved.
    laptop.set_user_verified(False)
    try:
        confirm_page(laptop, guarded, second)
        press(laptop, "confirm-approve")
        wait(laptop, lambda d: "The passkey step did not complete" in text(d), "the failure")
        assert status_of(web_home, second) == Status.PENDING
    finally:
        laptop.set_user_verified(True)


def _revision(home, row: int) -> int:
    from poppy_tui.agent.store import Store

    with Store.open(resolve_paths(home).database) as store:
        return store.get_operation(row).current.id


def test_declining_needs_no_passkey(guarded, web_home, travel, laptop):
    row = queue_cancel(web_home, travel, "Aveiro, 1 night")
    laptop.get(f"{guarded.url}/op/{row}")
    wait(laptop, lambda d: "Summary — written by the Company" in text(d), "the review")
    press(laptop, "decline")
    wait(laptop, lambda d: "Decline this operation?" in text(d), "the decline confirmation")
    press(laptop, "confirm-decline")
    wait(laptop, lambda d: "DECLINED — you declined" in text(d), "declined")
    assert status_of(web_home, row) == Status.DECLINED
