"""What a person mistypes gets one line that says what is wrong, and never reaches the resolver:
a port out of range, a URL missing its colon, free text, an empty or unusable --home, a relative
--since, a misspelt command or Company name."""

from __future__ import annotations

from datetime import datetime, UTC

import pytest

from cli_support import run_process
from poppy_tui.cli.errors import CliError
from poppy_tui.cli.exit_codes import Exit
from poppy_tui.cli.export import parse_when
from tests.companies.bulk_company import BulkCompany


@pytest.fixture
def bench_goods(company_added):
    """A Company written from the spec (tests/companies), named "Bench Goods", added to the home."""
    return company_added(BulkCompany)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("http://127.0.0.1:99999", "the port must be a number from 1 to 65535"),
        ("http://127.0.0.1:0", "the port must be a number from 1 to 65535"),
        ("https://shop.example:http", "the port must be a number from 1 to 65535"),
        ("http//127.0.0.1:46059", "did you mean http://127.0.0.1:46059?"),
        ("HTTPS//shop.example", "did you mean https://shop.example?"),
        ("not a url", "is not a domain or URL"),
        ("", "is not a domain or URL"),
        ("shop_x.example", "'shop_x.example' is not a host name"),
        ("shop-.example", "is not a host name"),
    ],
)
def test_a_mistyped_company_is_one_line_and_never_looked_up(cli, home, target, expected):
    run = cli("companies", "add", target)
    assert run.code == Exit.USAGE, run.err
    assert expected in run.err
    assert len(run.err.strip().splitlines()) == 1
    assert run.err.count("can't") <= 1  # said once (walk K3: "can't use …: can't be used: …")
    # Refused before any connection: no resolver or connect error is quoted.
    assert "resolve" not in run.err and "Connect" not in run.err and "Traceback" not in run.err
    # The plain-http note belongs only to a refusal about the scheme.
    assert "plain http only" not in run.err


def test_a_port_out_of_range_is_one_line_from_the_real_program(home):
    done = run_process("companies", "add", "http://127.0.0.1:99999", home=home)
    assert done.code == Exit.USAGE, done.err
    assert "Traceback" not in done.err and "OverflowError" not in done.err
    assert len(done.err.strip().splitlines()) == 1


def test_an_ftp_url_still_says_what_plain_http_is_allowed_for(cli, home):
    run = cli("companies", "add", "ftp://shop.example")
    assert run.code == Exit.USAGE
    assert "got ftp scheme" in run.err


@pytest.mark.parametrize("given", ["", "   "])
def test_an_empty_home_is_refused(home, given):
    done = run_process("--home", given, "pending", home=home)
    assert done.code == Exit.USAGE, done.err
    assert "--home is empty" in done.err


def test_an_unusable_home_is_one_readable_line(home):
    done = run_process("--home", "/proc", "pending", home=home)
    assert done.code != Exit.OK
    assert done.err.startswith("poppy-tui: can't use /proc"), done.err
    assert "[Errno" not in done.err and "Traceback" not in done.err
    assert len(done.err.strip().splitlines()) == 1


NOW = datetime(2026, 12, 4, 15, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10 minutes ago", "2026-12-04T15:20:00.000000Z"),
        ("1h", "2026-12-04T14:30:00.000000Z"),
        ("90s", "2026-12-04T15:28:30.000000Z"),
        ("2 days ago", "2026-12-02T15:30:00.000000Z"),
        ("1 week", "2026-11-27T15:30:00.000000Z"),
        ("now", "2026-12-04T15:30:00.000000Z"),
        ("today", "2026-12-04T00:00:00.000000Z"),
        ("Yesterday", "2026-12-03T00:00:00.000000Z"),
        ("2026-12-01T09:00:00Z", "2026-12-01T09:00:00.000000Z"),
    ],
)
def test_since_accepts_relative_times(text, expected):
    assert parse_when(text, "--since", now=NOW) == expected


@pytest.mark.parametrize("text", ["5 parsecs ago", "ten minutes ago", "1h ago ago", "-1h"])
def test_since_refuses_what_it_cannot_read_and_says_what_it_takes(text):
    with pytest.raises(CliError) as refused:
        parse_when(text, "--since", now=NOW)
    assert refused.value.code == Exit.USAGE
    assert "'10 minutes ago'" in str(refused.value) and "yesterday" in str(refused.value)


def test_since_relative_through_the_command(cli, home):
    for text in ("10 minutes ago", "1h", "yesterday"):
        run = cli("history", "--since", text, "--json")
        assert run.code == Exit.OK, run.err


@pytest.mark.parametrize(
    ("typed", "meant"), [("pendng", "pending"), ("histroy", "history"), ("comapnies", "companies")]
)
def test_a_misspelt_command_suggests_the_closest(home, typed, meant):
    done = run_process(typed, home=home)
    assert done.code == Exit.USAGE
    assert f"did you mean '{meant}'?" in done.err


def test_a_command_far_from_any_suggests_nothing(home):
    done = run_process("xyzzyplugh", home=home)
    assert done.code == Exit.USAGE
    assert "did you mean" not in done.err


def test_a_misspelt_company_suggests_the_known_one(cli, bench_goods):
    run = cli("call", "Bench Godos", "GET", "/api/things")
    assert run.code == Exit.ERROR
    assert "unknown company 'Bench Godos'; did you mean Bench Goods (127.0.0.1:" in run.err
    # Not the advice to add a Company that is already known.
    assert "companies add" not in run.err


def test_a_company_unlike_any_still_gets_the_list_and_the_add_hint(cli, bench_goods):
    run = cli("call", "Zzyzx", "GET", "/api/things")
    assert run.code == Exit.ERROR
    assert "unknown company 'Zzyzx' (known: Bench Goods (127.0.0.1:" in run.err
    assert "poppy-tui companies add" in run.err


def test_a_long_error_line_keeps_the_fix_at_its_end(cli, home):
    """An error cut at its end lost the fix (walk C3, and K3's kin): cut in the middle instead."""
    run = cli("call", "x" * 3000, "GET", "/")
    assert run.code != 0
    [line] = run.err.strip().splitlines()
    assert len(line) <= 1100 and "…(+" in line
    assert line.endswith("poppy-tui companies add DOMAIN'"), line[-120:]
