"""Look-alike Company names carry a mark and the verified domain everywhere (Ops §5: the person
is shown the Company's name; docs/safety.md, "Company names"), and the words safety builds
have proper plurals and possessives (docs/safety.md, "Wording").

The Company used over HTTP here is written from the core digest alone (a poppy.json
on loopback), not from poppy_tui/demo.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Iterator

import pytest
from textual.widgets import DataTable
from textual.widgets.select import InvalidSelectValueError

from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Store
from poppy_tui.cli.main import main
from poppy_tui.safety.company_name import NAME_MARK, company_label
from poppy_tui.safety.discrepancies import Finding
from poppy_tui.safety.wording import count, findings_tally, plural, possessive
from tests.cli.cli_support import make_home
from datetime import UTC

LOOKALIKE = "\u041c\u0430nzanita Outfitters"  # Cyrillic М and а
HONEST = "Manzanita Outfitters"


# --- the label ------------------------------------------------------------------------


def test_an_honest_name_is_shown_unmarked_beside_its_domain():
    label = company_label(HONEST, "manzanita.example")
    assert not label.marked and label.warning is None
    assert label.text == "Manzanita Outfitters (manzanita.example)"
    assert label.possessive == "Manzanita Outfitters' (manzanita.example)"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (LOOKALIKE, "mixes letters from different alphabets"),
        ("P\uff41ypal", "mixes letters from different alphabets"),  # fullwidth а beside ASCII
        ("Acme\u202eCorp", "text-direction controls"),
        ("Acme\u200bCorp", "invisible characters"),
    ],
)
def test_a_name_that_can_pass_for_another_is_marked_and_says_why(name, reason):
    label = company_label(name, "shop.example")
    assert label.marked
    assert label.text.startswith(NAME_MARK + " ") and label.text.endswith(" (shop.example)")
    assert reason in (label.warning or "") and "shop.example" in (label.warning or "")


def test_escapes_in_a_name_are_shown_as_tokens_not_marked():
    label = company_label("Evil\x1b[2J Corp", "shop.example")
    assert label.name == "Evil\\x1b[2J Corp" and not label.marked


def test_a_look_alike_domain_is_marked_too():
    label = company_label(HONEST, "m\u0430nzanita.example")
    assert label.marked and "its domain" in (label.warning or "")


def test_the_marked_name_fits_its_width_mark_included():
    label = company_label(LOOKALIKE + " of Portland, Oregon", "shop.example", 20)
    shown, marker = label.marked_name.split("…")
    assert len(shown) == 20 and shown.startswith(NAME_MARK) and marker.startswith("(+")


def test_company_content_carries_the_mark_and_the_domain():
    from poppy_tui.safety.summary import company_content

    assert (
        company_content(LOOKALIKE, "shop.example").plain == f"{NAME_MARK} {LOOKALIKE}  shop.example"
    )
    assert company_content(HONEST, "shop.example", with_domain=False).plain == HONEST


# --- wording ---------------------------------------------------------------------------


def test_plurals_and_possessives():
    assert count(1, "warning") == "1 warning" and count(2, "warning") == "2 warnings"
    assert count(1, "second") == "1 second" and count(0, "second") == "0 seconds"
    assert plural("is", 1) == "is" and plural("is", 3) == "are"
    assert (
        count(2, "match") == "2 matches"
        and count(2, "policy") == "2 policies"
        and count(2, "day") == "2 days"
    )
    assert possessive("Manzanita Outfitters") == "Manzanita Outfitters'"
    assert possessive("Acme") == "Acme's"


def test_findings_tally_leaves_out_zero_counts():
    def findings(*severities: str) -> list[Finding]:
        return [Finding(s, "x", "m") for s in severities]  # type: ignore[arg-type]

    assert findings_tally(findings("warning", "warning")) == "2 warnings"
    assert findings_tally(findings("danger", "warning", "info")) == "1 danger, 1 warning"
    assert (
        findings_tally(findings("danger", "danger", "warning", "warning"))
        == "2 dangers, 2 warnings"
    )
    assert findings_tally(findings("info")) == "no findings"


def test_safety_messages_use_singulars():
    from datetime import datetime, timedelta

    from poppy_tui.protocol.operation import Operation
    from poppy_tui.safety.discrepancies import check_operation
    from poppy_tui.safety.sanitize import sanitize_line

    now = datetime(2026, 10, 8, 19, 0, tzinfo=UTC)
    expires = now + timedelta(seconds=1.5)
    operation = Operation(
        "exc_1", "r1", "Pay $5.00.", expires, expires.isoformat(), {"amount": "5.00"}
    )
    soon = [
        f.message for f in check_operation(operation, None, now=now) if f.code == "expires_soon"
    ]
    assert soon and soon[0].startswith("Only 1 second is left")
    terms = {f"k{i}": "a\u200bb" for i in range(11)}
    many = Operation("exc_1", "r1", "Pay.", now + timedelta(hours=1), "x", terms)
    capped = [f.message for f in check_operation(many, None, now=now) if f.field is None]
    assert "…and 1 more field with the same problem." in capped
    assert sanitize_line("abcdef", 5).text == "abcde…(+1 char)"
    assert sanitize_line("abcdefg", 5).text == "abcde…(+2 chars)"


# --- the CLI: companies add / list ------------------------------------------------------


class _SpecCompany(BaseHTTPRequestHandler):
    """Serves only /.well-known/poppy.json, as the core digest describes it."""

    name = LOOKALIKE

    def do_GET(self) -> None:  # the stdlib's name
        if self.path != "/.well-known/poppy.json":
            self.send_error(404)
            return
        host = f"127.0.0.1:{self.server.server_address[1]}"
        body = json.dumps(
            {
                "protocol_version": "0.4",
                "organization": {"name": self.name, "domain": host},
                "apis": [{"type": "openapi", "url": f"http://{host}/openapi.json"}],
                "extensions": {"operations": [{"version": "2"}]},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def lookalike_company() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SpecCompany)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def home(tmp_path, monkeypatch):
    return make_home(tmp_path, monkeypatch)


def test_companies_add_and_list_mark_a_look_alike_name(home, lookalike_company, capsys):
    assert main(["companies", "add", f"http://{lookalike_company}"]) == 0
    added = capsys.readouterr().out
    first, second = added.splitlines()[:2]
    assert f"{NAME_MARK} {LOOKALIKE} ({lookalike_company}) at http://{lookalike_company}" in first
    assert "look-alike letters" in second and lookalike_company in second
    assert main(["companies", "list"]) == 0
    listed = capsys.readouterr().out
    assert (
        f"{NAME_MARK} {LOOKALIKE} ({lookalike_company})" in listed
        and "look-alike letters" in listed
    )


def test_companies_list_leaves_an_honest_name_unmarked(home, capsys):
    from poppy_tui.protocol.discovery import parse_poppy_json

    paths = resolve_paths(home).ensure()
    with Store.open(paths.database) as store:
        store.upsert_company(
            "http://127.0.0.1:9",
            parse_poppy_json(
                {
                    "protocol_version": "0.4",
                    "organization": {"name": HONEST, "domain": "127.0.0.1:9"},
                    "apis": [{"type": "openapi", "url": "http://127.0.0.1:9/openapi.json"}],
                },
                "127.0.0.1:9",
                allow_loopback_http=True,
            ),
        )
    assert main(["companies", "list"]) == 0
    out = capsys.readouterr().out
    assert f"{HONEST} (127.0.0.1:9)" in out and NAME_MARK not in out


# --- the TUI: companies table, Company picker, review header --------------------------------


async def test_the_tui_marks_a_look_alike_everywhere_its_name_is_shown(tmp_path, monkeypatch):
    from poppy_tui.ui.app import PoppyApp
    from poppy_tui.ui.widgets.company_select import CompanySelect
    from textual.widgets import OptionList

    from poppy_tui.ui.screens.composer import ComposerScreen
    from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen
    from tests.ui.ui_sample import (
        add_company,
        agents_on,
        add_operation,
        review_shown,
        started,
        wait_for,
    )

    monkeypatch.setenv("TZ", "UTC")
    with Store.open(tmp_path / "poppy.db") as store, agents_on(store.path) as make_agent:
        fake = add_company(store, LOOKALIKE, 8411)
        add_company(store, HONEST, 8412)
        row = add_operation(store, fake, "exc_1", "Pay $5.00 for a thing.")
        app = PoppyApp(make_agent(), initial_screen="companies")
        async with app.run_test(size=(120, 36)) as pilot:
            await started(pilot)
            table = app.screen.query_one("#companies-table", DataTable)
            await wait_for(pilot, lambda: table.row_count == 2)
            rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
            by_domain = {r[1]: r[0] for r in rows}
            assert by_domain["127.0.0.1:8411"] == f"{NAME_MARK} {LOOKALIKE}"
            assert by_domain["127.0.0.1:8412"] == HONEST

            await pilot.press("n")
            await wait_for(
                pilot,
                lambda: (
                    isinstance(app.screen, ComposerScreen)
                    and app.screen.query_one(CompanySelect).query_one(OptionList).option_count == 3
                ),
            )
            listing = app.screen.query_one(CompanySelect).query_one(
                OptionList
            )  # the options as shown
            options = [
                str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)
            ]
            assert f"{NAME_MARK} {LOOKALIKE}  127.0.0.1:8411" in options
            assert f"{HONEST}  127.0.0.1:8412" in options

        inbox = PoppyApp(make_agent())
        async with inbox.run_test(size=(120, 36)) as pilot:
            await started(pilot)
            table = inbox.screen.query_one("#pending-table", DataTable)
            await wait_for(pilot, lambda: table.row_count == 1)
            # The compact inbox cuts the name to its column (the mark counted) and puts the
            # check badge under it.
            shown = str(table.get_row_at(0)[0]).split("\n", 1)[0]
            assert shown.startswith(f"{NAME_MARK} ") and shown.endswith("…")
            assert f"{NAME_MARK} {LOOKALIKE}".startswith(shown[:-1])

        review = PoppyApp(make_agent(), initial_screen=f"review:{row}")
        async with review.run_test(size=(120, 36)) as pilot:
            screen = await review_shown(pilot)
            header = str(screen.query_one("#company-line").render())
            assert f"{NAME_MARK} {LOOKALIKE}" in header and "127.0.0.1:8411" in header
            assert "look-alike letters" in header
            await wait_for(pilot, screen.can_approve)  # past the arming delay
            await pilot.press("a")
            await wait_for(pilot, lambda: isinstance(review.screen, ConfirmApproveScreen))
            confirm = str(review.screen.query_one("#confirm-company").render())
            assert f"{NAME_MARK} {LOOKALIKE}" in confirm and "127.0.0.1:8411" in confirm


async def test_talk_marks_a_look_alike_on_each_of_its_messages(tmp_path, monkeypatch):
    from textual.widgets import Select

    from poppy_tui.ui.app import PoppyApp
    from poppy_tui.ui.screens.conversation import MessageView
    from tests.ui.ui_sample import add_company, agents_on, wait_for

    monkeypatch.setenv("TZ", "UTC")
    with Store.open(tmp_path / "poppy.db") as store, agents_on(store.path) as make_agent:
        fake = add_company(store, LOOKALIKE, 8411, talk=True)
        conversation = store.upsert_conversation(
            fake.id, "http://127.0.0.1:8411/conversations", "conv_1"
        )
        store.add_message(
            conversation, {"id": "msg_1", "role": "company", "text": "Hello"}, "company"
        )
        app = PoppyApp(make_agent(), initial_screen="talk")
        async with app.run_test(size=(120, 36)) as pilot:
            select = app.screen.query_one("#talk-company", Select)

            async def offered() -> bool:  # the Company is among the choices once the list is read
                try:
                    select.value = fake.id
                except InvalidSelectValueError:
                    return False
                return True

            await wait_for(pilot, offered, describe=lambda: "the Company offered in the list")
            await wait_for(pilot, lambda: bool(app.screen.query(MessageView)))
            labels = [str(m.render()).split("\n", 1)[0] for m in app.screen.query(MessageView)]
            assert labels == [f"{NAME_MARK} {LOOKALIKE}"]


def test_a_companys_sentence_and_ours_are_punctuated_once():
    from poppy_tui.safety.wording import followed_by

    # "…account.; try again" was printed after a wrong password.
    assert followed_by("That email and password don't match an account.", "try again") == (
        "That email and password don't match an account. Try again."
    )
    assert followed_by("wrong code", "type the code again") == "wrong code; type the code again"
    assert followed_by("Refused!  ", "try again") == "Refused! Try again."
    assert followed_by("no;", "try again") == "no; try again"
    assert followed_by("", "try again") == "try again"
