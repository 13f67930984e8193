"""The page in a real browser (headless Chromium through Selenium), against the strict Company:
pair, see an operation arrive, open its review, approve and see it performed; withdraw in the grace
period; decline; what an unpaired browser, another site's page, a DNS-rebinding name and a frame
of another origin get; a revoked device out at its next request; the phone's viewport keeps the
Approve control on screen.

Two browsers for the module: a phone (390x844) and a desktop, each with an empty profile."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from poppy_tui.agent.paired_devices import DeviceBook
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status, Store
from tests.companies.serving import LoopbackServer
from tests.web.browser_support import browser, needs_chromium, on_screen, press, text, wait
from tests.web.web_support import new_link, queue_cancel, status_of

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def phone(web, web_home) -> Iterator[object]:
    """A phone paired through the page, as a person pairs one (so every test that uses it finds
    it paired, in whatever order the tests run)."""
    driver = browser(phone=True, resolve={"rebind.test": "127.0.0.1"})
    pair(driver, web_home, "my phone")
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def desktop(web) -> Iterator[object]:
    driver = browser(size=(1280, 900))
    yield driver
    driver.quit()


class Elsewhere:
    """Pages of another site (another origin on this machine), whatever HTML a test gives it."""

    def __init__(self) -> None:
        from starlette.applications import Starlette
        from starlette.responses import HTMLResponse
        from starlette.routing import Route

        self.pages: dict[str, str] = {}

        async def page(request):
            return HTMLResponse(self.pages[request.path_params["name"]])

        self.server = LoopbackServer(
            lambda _url: Starlette(routes=[Route("/{name}", page)]), "another site"
        )
        self.url = self.server.base_url

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture(scope="module")
def elsewhere() -> Iterator[Elsewhere]:
    site = Elsewhere()
    yield site
    site.stop()


def pair(driver, home, name: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(new_link(home))
    field = driver.find_element(By.ID, "name")
    assert driver.find_element(By.CSS_SELECTOR, "label[for=name]").text
    field.send_keys(name)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(driver, lambda d: "Waiting for you" in text(d), "the list after pairing")


def open_review(driver, web, row: int) -> None:
    driver.get(f"{web.url}/op/{row}")
    wait(driver, lambda d: "Summary — written by the Company" in text(d), "the review")


def test_an_unpaired_browser_sees_nothing(web, web_home, travel, desktop):
    row = queue_cancel(web_home, travel, "Madeira, 5 nights")
    for path in ("/", f"/op/{row}"):
        desktop.get(web.url + path)
        shown = text(desktop)
        assert "This browser is not paired" in shown
        assert "Strict Travel" not in shown and "Madeira" not in shown


def test_pair_see_it_arrive_approve_and_see_it_performed(web, web_home, travel, phone):
    from selenium.webdriver.common.by import By

    # The fixture paired it through the page: its name is the person's, its credential a hash.
    with DeviceBook.open(resolve_paths(web_home).data_dir) as book:
        assert "my phone" in [device.name for device in book.devices()]
    phone.get(web.url + "/")
    wait(phone, lambda d: "Waiting for you" in text(d), "the list")
    # A new operation shows on the open list without a reload (server-sent events).
    row = queue_cancel(web_home, travel, "Lagos, 4 nights")
    wait(phone, lambda d: "Lagos, 4 nights" in text(d), "the new operation on the open list")
    phone.find_element(By.PARTIAL_LINK_TEXT, "Lagos, 4 nights").click()
    wait(phone, lambda d: "Summary — written by the Company" in text(d), "the review")
    shown = text(phone)
    assert "Strict Travel" in shown and "WAITING FOR YOUR DECISION" in shown
    assert "Checks: the summary, the terms and your request agree" in shown
    # The phone's viewport keeps Approve on screen, at least 44 px each way, at the top of the page.
    assert phone.execute_script("return innerWidth") == 390
    assert on_screen(phone, "approve")
    press(phone, "approve")
    wait(phone, lambda d: "Approve this operation?" in text(d), "the confirmation")
    shown = text(phone)
    assert "Strict Travel" in shown and "no amount in the terms" in shown
    assert status_of(web_home, row) == Status.PENDING
    press(phone, "confirm-approve")
    wait(phone, lambda d: "APPROVED — sending in" in text(d), "the grace period's banner")
    assert on_screen(phone, "withdraw")
    assert travel.state.bookings[_booking(travel, "Lagos, 4 nights")]["status"] == "confirmed"
    # The grace period ends (as when it runs out): the server's dispatcher sends the approval.
    with Store.open(resolve_paths(web_home).database) as store:
        assert store.send_now([row], actor="test") == [row]
    wait(
        phone,
        lambda d: "PERFORMED — the Company confirmed it did this" in text(d),
        "the outcome, shown as it lands",
        timeout=60,
    )
    assert travel.state.bookings[_booking(travel, "Lagos, 4 nights")]["status"] == "cancelled"
    assert status_of(web_home, row) == Status.PERFORMED


def _booking(travel, trip: str) -> str:
    return next(b for b, v in travel.state.bookings.items() if v["trip"] == trip)


def test_withdraw_in_the_grace_period(web, web_home, travel, phone):
    row = queue_cancel(web_home, travel, "Braga, 1 night")
    before = len(travel.state.approvals_received())
    open_review(phone, web, row)
    press(phone, "approve")
    wait(phone, lambda d: "Approve this operation?" in text(d), "the confirmation")
    press(phone, "confirm-approve")
    wait(phone, lambda d: "APPROVED — sending in" in text(d), "the grace period")
    press(phone, "withdraw")
    wait(phone, lambda d: "WITHDRAWN — nothing was sent." in text(d), "the withdrawal")
    assert status_of(web_home, row) == Status.WITHDRAWN
    assert len(travel.state.approvals_received()) == before
    # It may be decided again: Approve again… is there.
    assert "Approve again…" in text(phone)


def test_decline(web, web_home, travel, phone):
    row = queue_cancel(web_home, travel, "Évora, 2 nights")
    open_review(phone, web, row)
    press(phone, "decline")
    wait(phone, lambda d: "Decline this operation?" in text(d), "the decline confirmation")
    assert "Évora, 2 nights" in text(phone)
    press(phone, "confirm-decline")
    wait(phone, lambda d: "DECLINED — you declined" in text(d), "the declined banner")
    assert status_of(web_home, row) == Status.DECLINED


def test_another_sites_post_no_csrf_token_and_another_host_are_refused(
    web, web_home, travel, phone, elsewhere
):
    row = queue_cancel(web_home, travel, "Sintra, 1 night")
    open_review(phone, web, row)
    revision = phone.find_element("name", "revision_id").get_attribute("value")
    csrf = phone.find_element("name", "csrf").get_attribute("value")
    # Another site's page posts a decline to the page, with the token it somehow learnt: the
    # browser sends the cookie (same site: another port of 127.0.0.1) but its own Origin.
    elsewhere.pages["attack"] = (
        f'<form id="f" method="post" action="{web.url}/op/{row}/decline/yes">'
        f'<input name="csrf" value="{csrf}"><input name="revision_id" value="{revision}">'
        '</form><script>document.getElementById("f").submit()</script>'
    )
    phone.get(f"{elsewhere.url}/attack")
    wait(phone, lambda d: "refused a request from a web page of another site" in text(d), "403")
    assert status_of(web_home, row) == Status.PENDING
    # On the page itself, a request without the session's token is refused.
    open_review(phone, web, row)
    status = phone.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        f"fetch('/op/{row}/decline/yes', {{method: 'POST', body: new URLSearchParams("
        f"{{revision_id: '{revision}'}})}}).then(r => done(r.status));"
    )
    assert status == 403 and status_of(web_home, row) == Status.PENDING
    # A name of another site that resolves to this machine (DNS rebinding) gets nothing.
    phone.get(f"http://rebind.test:{web.port}/op/{row}")
    shown = text(phone)
    assert "does not answer for that Host" in shown and "Sintra" not in shown


def test_the_page_does_not_render_in_a_frame_of_another_site(
    web, web_home, travel, phone, elsewhere
):
    from selenium.webdriver.common.by import By

    row = queue_cancel(web_home, travel, "Tavira, 3 nights")
    open_review(phone, web, row)  # paired: on its own, the page shows it
    elsewhere.pages["frame"] = (
        f'<p>clickjacking</p><iframe id="x" src="{web.url}/op/{row}" width="400" height="600">'
        "</iframe>"
    )
    phone.get(f"{elsewhere.url}/frame")
    frame = phone.find_element(By.ID, "x")
    phone.switch_to.frame(frame)
    try:
        assert "Tavira" not in text(phone) and "Strict Travel" not in text(phone)
        assert not phone.find_elements(By.ID, "approve")
    finally:
        phone.switch_to.default_content()


def test_a_revoked_device_is_out_at_its_next_request(web, web_home, travel, desktop):
    row = queue_cancel(web_home, travel, "Coimbra, 2 nights")
    pair(desktop, web_home, "desk")
    open_review(desktop, web, row)
    with DeviceBook.open(resolve_paths(web_home).data_dir) as book:
        assert book.revoke("desk") is not None
    # The open page learns it from its live stream and shows the "not paired" page.
    wait(desktop, lambda d: "This browser is not paired" in text(d), "the page after revoking")
    assert "Coimbra" not in text(desktop)
    desktop.get(f"{web.url}/op/{row}")
    assert "This browser is not paired" in text(desktop)
