"""`poppy-tui web` over HTTP (httpx against the real server on 127.0.0.1, the strict Company behind
it): what an unpaired browser sees, pairing (one use, expiry, the cookie's attributes, only hashes
kept), the headers every answer carries, Host, Origin and CSRF refusals, limits, and decisions made
through the page as the TUI makes them."""

from __future__ import annotations

import html
import re
import sqlite3

import httpx
import pytest

from poppy_tui.agent.paired_devices import FILE_NAME, DeviceBook
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status
from poppy_tui.agent.status_words import local_time
from tests.web.web_support import (
    Browserless,
    device_cookie,
    make_home,
    new_link,
    person_agent,
    queue,
    queue_cancel,
    running_web,
    status_of,
)


@pytest.fixture(scope="module")
def phone(web):
    browser = Browserless(web)
    browser.pair("phone")
    yield browser
    browser.close()


def revision_of(page: str) -> str:
    return re.search(r'name="revision_id" value="(\d+)"', page).group(1)


def form(browser: Browserless, row: int) -> dict[str, str]:
    page = browser.get(f"/op/{row}")
    assert page.status_code == 200, page.text
    return {"csrf": browser.csrf(f"/op/{row}"), "revision_id": revision_of(page.text)}


# ---- what a browser that isn't paired sees ------------------------------------------------------


def test_an_unpaired_browser_sees_nothing_of_the_queue(web, web_home, travel, phone):
    row = queue_cancel(web_home, travel)
    stranger = Browserless(web)
    try:
        for path in ("/", f"/op/{row}", "/events"):
            answer = stranger.get(path)
            assert answer.status_code == 403
            assert "Strict Travel" not in answer.text and "bk_1" not in answer.text
            assert "cxl_" not in answer.text and "phone" not in answer.text
        assert "not paired" in stranger.get("/").text
        # A made-up credential is no better than none.
        stranger.credential = "x" * 43
        assert stranger.get(f"/op/{row}").status_code == 403
        # Nor can it decide.
        answer = stranger.post(f"/op/{row}/decline/yes", {"revision_id": "1", "csrf": "0"})
        assert answer.status_code == 403
        assert status_of(web_home, row) == Status.PENDING
    finally:
        stranger.close()
    # The paired phone sees it.
    assert "Strict Travel" in phone.get(f"/op/{row}").text


# ---- pairing --------------------------------------------------------------------------------------


def test_pairing_sets_a_host_only_http_only_strict_cookie_and_keeps_only_hashes(
    web, web_home, travel
):
    link = new_link(web_home)
    path = link.split(web.url, 1)[1]
    code = path.rsplit("/", 1)[1]
    with httpx.Client(base_url=web.url) as client:
        assert "A name for this device" in client.get(path).text
        answer = client.post(path, data={"name": "laptop"}, headers={"origin": web.url})
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    cookie = device_cookie(answer)
    assert cookie["path"] == "/" and "domain" not in cookie
    assert cookie.get("httponly") and cookie.get("secure")
    assert str(cookie["samesite"]).lower() == "strict"
    # Neither the credential nor the pairing code is in the devices' file: only their hashes.
    raw = (resolve_paths(web_home).data_dir / FILE_NAME).read_bytes()
    assert cookie["value"].encode() not in raw and code.encode() not in raw
    with sqlite3.connect(resolve_paths(web_home).data_dir / FILE_NAME) as db:
        dumped = "\n".join(db.iterdump())
    assert cookie["value"] not in dumped and code not in dumped


def test_a_pairing_link_works_once_and_not_after_it_expires(web, web_home, travel):
    link = new_link(web_home)
    path = link.split(web.url, 1)[1]
    with httpx.Client(base_url=web.url) as client:
        first = client.post(path, data={"name": "tablet"}, headers={"origin": web.url})
        assert first.status_code == 303
        again = client.post(path, data={"name": "another"}, headers={"origin": web.url})
        assert again.status_code == 410 and "set-cookie" not in again.headers
        assert client.get(path).status_code == 410
        expired = new_link(web_home, seconds=0).split(web.url, 1)[1]
        late = client.post(expired, data={"name": "late"}, headers={"origin": web.url})
        assert late.status_code == 410 and "set-cookie" not in late.headers
        unknown = client.post("/pair/" + "A" * 43, data={"name": "x"}, headers={"origin": web.url})
        assert unknown.status_code == 410
    names = [d.name for d in DeviceBook.open(resolve_paths(web_home).data_dir).devices()]
    assert "tablet" in names and "another" not in names and "late" not in names


def test_pairing_from_another_site_or_without_a_name_pairs_nothing(web, web_home, travel):
    path = new_link(web_home).split(web.url, 1)[1]
    with httpx.Client(base_url=web.url) as client:
        for headers in ({"origin": "https://evil.test"}, {"origin": "null"}, {}):
            answer = client.post(path, data={"name": "evil"}, headers=headers)
            assert answer.status_code == 403 and "set-cookie" not in answer.headers
        blank = client.post(path, data={"name": "   "}, headers={"origin": web.url})
        assert blank.status_code == 400 and "give the device a name" in blank.text
        # The link is still good after those: none of them used it.
        ok = client.post(path, data={"name": "desk"}, headers={"origin": web.url})
        assert ok.status_code == 303


def test_a_device_name_is_the_persons_but_shown_neutralised(web, web_home, travel):
    browser = Browserless(web)
    try:
        browser.pair("my\u202ephone <b>\x1b[31m")
        page = browser.get("/").text
        assert "\u202e" not in page and "\x1b" not in page and "<b>" not in page
        assert "⟨U+202E⟩" in page and "&lt;b&gt;" in page and "\\x1b[31m" in page
    finally:
        browser.close()


# ---- headers on every answer ------------------------------------------------------------------


def test_every_answer_is_uncached_unframeable_and_has_no_cors(web, phone):
    answers = [
        phone.get("/"),
        phone.get("/static/app.js"),
        phone.get("/static/style.css"),
        Browserless(web).get("/"),
        phone.get("/", host="evil.test"),
        phone.client.options("/", headers={"origin": "https://evil.test"}),
        phone.get("/", origin="https://evil.test"),
    ]
    for answer in answers:
        policy = answer.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
        assert answer.headers["cache-control"] == "no-store"
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "same-origin"
        assert not any(name.startswith("access-control-") for name in answer.headers)
        assert "server" not in answer.headers
    assert answers[5].status_code == 405


def test_pages_carry_no_inline_script_or_style(phone, web_home, travel):
    row = queue_cancel(web_home, travel, "Porto, 2 nights")
    for path in ("/", f"/op/{row}"):
        page = phone.get(path).text
        assert re.findall(r"<script[^>]*>", page) == ['<script src="/static/app.js" defer>']
        assert (
            "<style" not in page
            and " style=" not in page
            and " on"
            not in page.replace(" one", "")
            .replace(" only", "")
            .replace(" once", "")
            .replace(" on ", "")
        )


# ---- Host, Origin and CSRF --------------------------------------------------------------------------


def test_another_host_is_refused_before_anything_runs(web, web_home, travel, phone):
    row = queue_cancel(web_home, travel)
    for host in ("evil.test", f"evil.test:{web.port}", "127.0.0.1.evil.test", ""):
        answer = phone.get(f"/op/{row}", host=host)
        assert answer.status_code == 421 and "Strict Travel" not in answer.text
    fields = form(phone, row)
    answer = phone.post(f"/op/{row}/decline/yes", fields, host=f"rebind.test:{web.port}")
    assert answer.status_code == 421
    assert status_of(web_home, row) == Status.PENDING
    # The loopback names are this server's, under any port (a forward hands on the one it used).
    assert phone.get("/", host=f"localhost:{web.port}").status_code == 200
    assert phone.get("/", host="LOCALHOST:1").status_code == 200


@pytest.mark.parametrize(
    "origin",
    ["https://evil.test", "null", "http://127.0.0.1:1", "http://localhost.evil.test", "", None],
)
def test_a_decision_from_another_origin_is_refused(web, web_home, travel, phone, origin):
    row = queue_cancel(web_home, travel)
    fields = form(phone, row)
    headers = phone.headers()
    if origin is None:
        del headers["origin"]
    else:
        headers["origin"] = origin
    answer = phone.client.post(f"/op/{row}/decline/yes", data=fields, headers=headers)
    assert answer.status_code == 403
    assert status_of(web_home, row) == Status.PENDING


def test_a_decision_another_site_made_is_refused_by_sec_fetch_site(web, web_home, travel, phone):
    row = queue_cancel(web_home, travel)
    fields = form(phone, row)
    answer = phone.post(f"/op/{row}/decline/yes", fields, **{"sec-fetch-site": "cross-site"})
    assert answer.status_code == 403
    assert status_of(web_home, row) == Status.PENDING


def test_a_decision_without_this_sessions_csrf_token_is_refused(web, web_home, travel, phone):
    row = queue_cancel(web_home, travel)
    fields = form(phone, row)
    other = Browserless(web)
    try:
        other.pair("other phone")
        others = other.csrf("/")
        for token in (None, "", "0" * 64, others):
            sent = dict(fields)
            if token is None:
                del sent["csrf"]
            else:
                sent["csrf"] = token
            for step in ("approve", "approve/yes", "decline/yes", "withdraw"):
                answer = phone.post(f"/op/{row}/{step}", sent)
                assert answer.status_code == 403 and "CSRF" in answer.text
    finally:
        other.close()
    assert status_of(web_home, row) == Status.PENDING
    # With its own token it works.
    assert phone.post(f"/op/{row}/decline/yes", fields).status_code == 303
    assert status_of(web_home, row) == Status.DECLINED


def test_no_decision_by_get(web, web_home, travel, phone):
    row = queue_cancel(web_home, travel)
    for step in ("approve", "approve/yes", "decline", "decline/yes", "withdraw", "resolve/yes"):
        assert phone.get(f"/op/{row}/{step}").status_code == 405
    assert status_of(web_home, row) == Status.PENDING


# ---- limits -----------------------------------------------------------------------------------------


def test_a_large_body_is_refused_and_decides_nothing(web, web_home, travel, phone):
    row = queue_cancel(web_home, travel)
    fields = form(phone, row)
    big = {**fields, "padding": "x" * 100_000}
    assert phone.post(f"/op/{row}/decline/yes", big).status_code == 413
    # Sent in chunks, without a length: counted as it comes.
    body = "&".join(f"{k}={v}" for k, v in big.items()).encode()

    def chunks():
        for start in range(0, len(body), 4096):
            yield body[start : start + 4096]

    headers = {**phone.headers(), "content-type": "application/x-www-form-urlencoded"}
    answer = phone.client.post(f"/op/{row}/decline/yes", content=chunks(), headers=headers)
    assert answer.status_code == 413 and status_of(web_home, row) == Status.PENDING


def test_live_streams_are_limited_per_device(web, phone):
    with httpx.Client(base_url=web.url, timeout=30) as client:
        streams = []
        try:
            for _ in range(4):
                stream = client.stream("GET", "/events", headers=phone.headers())
                answer = stream.__enter__()
                streams.append(stream)
                assert answer.status_code == 200
                assert answer.headers["content-type"].startswith("text/event-stream")
            refused = client.get("/events", headers=phone.headers())
            assert refused.status_code == 503 and refused.headers["retry-after"]
        finally:
            for stream in streams:
                stream.__exit__(None, None, None)


# ---- decisions through the page ---------------------------------------------------------------------


def test_approve_confirms_with_the_company_and_amount_then_records_before_sending(
    web, web_home, phone, travel
):
    row = queue_cancel(web_home, travel, "Porto, 2 nights")
    fields = form(phone, row)
    asked = phone.post(f"/op/{row}/approve", fields)
    assert asked.status_code == 200
    assert "Approve this operation?" in asked.text and "Strict Travel" in asked.text
    assert "Amount" in asked.text and "no amount in the terms — check the summary" in asked.text
    assert status_of(web_home, row) == Status.PENDING  # asking decides nothing
    before = len(travel.state.approvals_received())
    done = phone.post(f"/op/{row}/approve/yes", fields)
    assert done.status_code == 303
    # Recorded at once; nothing sent in the grace period.
    assert status_of(web_home, row) == Status.APPROVED
    assert len(travel.state.approvals_received()) == before
    review = phone.get(done.headers["location"]).text
    assert "APPROVED — sending in" in review and "Withdraw" in review
    # Withdraw in the grace period: nothing was sent, and it may be decided again.
    assert phone.post(f"/op/{row}/withdraw", {"csrf": fields["csrf"]}).status_code == 303
    assert status_of(web_home, row) == Status.WITHDRAWN
    assert "WITHDRAWN — nothing was sent." in phone.get(f"/op/{row}").text
    assert len(travel.state.approvals_received()) == before


def test_the_review_shows_the_operation_as_received_folded_and_escaped(
    web, web_home, travel, phone
):
    row = queue_cancel(web_home, travel, "Lagos <b>3</b> nights")
    page = phone.get(f"/op/{row}").text
    folded = re.search(
        r'<details class="raw">\s*<summary>Operation as received</summary>\s*<pre>(.*?)</pre>',
        page,
        re.S,
    )
    assert folded, "the review has no folded 'Operation as received'"
    received = html.unescape(folded.group(1))
    assert '"operation_id"' in received and '"revision"' in received
    assert "<b>3</b>" in received  # the Company's JSON, shown as text
    assert "<b>" not in folded.group(1)


def where_it_stands(browser: Browserless, row: int) -> str:
    page = browser.get(f"/op/{row}").text
    found = re.search(
        r'<p class="where" id="where"><span class="label">Where it stands:</span> (.*?)</p>', page
    )
    assert found, "the review says nothing of where it stands"
    return html.unescape(found.group(1))


def explained(home, row: int):
    agent = person_agent(home)
    try:
        return agent.explain(row)
    finally:
        agent.store.close()


def shown_by_the_cli(home, row: int, capsys) -> str:
    from poppy_tui.cli.main import main

    capsys.readouterr()
    assert main(["--home", str(home), "show", str(row)]) == 0
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if line.startswith("Where it stands: ")]
    return line.removeprefix("Where it stands: ")


def test_where_it_stands_is_said_in_the_words_of_agent_explain_as_show_says_it(
    web, web_home, travel, phone, capsys
):
    """The page's "Where it stands" is Agent.explain's sentence (its time in the page's local
    form), the sentence `poppy-tui show` prints (in UTC): one source, so they can't disagree."""
    row = queue_cancel(web_home, travel, "Braga, 1 night")
    fields = form(phone, row)
    seen = []

    def agrees() -> None:
        said = explained(web_home, row)
        assert where_it_stands(phone, row) == said.sentence(local_time)
        assert shown_by_the_cli(web_home, row, capsys) == said.sentence()
        seen.append(said.why.value)

    agrees()  # waiting for the person
    assert phone.post(f"/op/{row}/approve/yes", fields).status_code == 303
    agrees()  # approved, in its grace period (60 s here): on its way, and when
    assert phone.post(f"/op/{row}/withdraw", {"csrf": fields["csrf"]}).status_code == 303
    agrees()  # withdrawn: waiting for the person again
    assert phone.post(f"/op/{row}/decline/yes", form(phone, row)).status_code == 303
    agrees()  # declined: nothing was sent
    assert seen == ["waiting_for_you", "grace", "waiting_for_you", "declined"]
    assert where_it_stands(phone, row) == "declined; nothing was sent"


def test_who_asked_is_said_as_the_tui_and_show_say_it(web, web_home, travel, phone, capsys):
    from poppy_tui.cli.main import main

    row = queue_cancel(web_home, travel, "Faro, 3 nights")  # through the agent, origin "cli"
    page = html.unescape(phone.get(f"/op/{row}").text)
    capsys.readouterr()
    assert main(["--home", str(web_home), "show", str(row)]) == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("Asked by: ")]
    asked = line.removeprefix("Asked by: ")
    assert asked == "the CLI"
    assert f", asked by {asked}</p>" in page
    listing = html.unescape(phone.get("/").text)
    assert '<span class="who">asked by CLI</span>' in listing  # the inbox row's short form


def test_a_stale_revision_is_not_approved(web, web_home, travel, phone):
    row = queue(web_home, "/bookings/bk_1/rebook", {"date": "2026-12-01"})
    fields = form(phone, row)
    # The Company sends new terms for the same action (a new revision) while the page is open.
    assert queue(web_home, "/bookings/bk_1/rebook", {"date": "2026-12-02"}) == row
    answer = phone.post(f"/op/{row}/approve/yes", fields)
    assert answer.status_code == 409
    assert "New terms arrived while you were confirming; nothing was approved." in answer.text
    asked = phone.post(f"/op/{row}/approve", fields)
    assert "Not yet: new terms arrived; read them first. Nothing was approved." in asked.text
    assert status_of(web_home, row) == Status.PENDING


def test_decline_asks_once_with_the_summary_then_is_final(web, web_home, travel, phone):
    row = queue_cancel(web_home, travel, "Porto, 2 nights")
    fields = form(phone, row)
    asked = phone.post(f"/op/{row}/decline", fields)
    assert "Decline this operation?" in asked.text and "(Porto, 2 nights)" in asked.text
    assert "This is final for this revision." in asked.text
    assert status_of(web_home, row) == Status.PENDING
    assert phone.post(f"/op/{row}/decline/yes", fields).status_code == 303
    assert status_of(web_home, row) == Status.DECLINED
    page = phone.get(f"/op/{row}").text
    assert "DECLINED — you declined; the action was not performed" in page
    assert 'id="approve"' not in page and 'id="decline"' not in page
    # Approving it now says why not, in the TUI's words.
    answer = phone.post(f"/op/{row}/approve", fields)
    assert (
        "Can't approve: it is not waiting for a decision (it is declined). Nothing was approved."
        in html.unescape(answer.text)
    )


def test_a_connection_closed_mid_form_decides_nothing(web, web_home, travel, phone):
    import socket
    from urllib.parse import urlencode

    row = queue_cancel(web_home, travel)
    body = urlencode(form(phone, row)).encode()
    head = (
        f"POST /op/{row}/decline/yes HTTP/1.1\r\nHost: {web.host}\r\nOrigin: {web.url}\r\n"
        f"Cookie: __Host-poppy-device={phone.credential}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", web.port), timeout=10) as sock:
        sock.sendall(head + body[: len(body) // 2])  # then the phone loses its connection
    # The server goes on answering, and the half-sent decline decided nothing.
    assert phone.get(f"/op/{row}").status_code == 200
    assert status_of(web_home, row) == Status.PENDING


def test_pairing_attempts_are_limited(tmp_path):
    # A server of its own: this uses up its pairing attempts for a minute (the module's server
    # goes on pairing for the other tests, in whatever order they run).
    with running_web(make_home(tmp_path / "home"), tmp_path) as server:
        with httpx.Client(base_url=server.url) as client:
            codes = [client.get("/pair/" + "B" * 43).status_code for _ in range(40)]
    assert 410 in codes and codes[-1] == 429
