"""`companies add|list|refresh|remove` and how commands name a Company (docs/cli.md, "Naming a
Company"; poppy.json caching, digest 1.1), against the spec-only test Company
(tests/netguard/spec_company.py), addressed as localhost."""

from __future__ import annotations

import io
import os

import pytest

from poppy_tui.cli.errors import CliError
from poppy_tui.cli.exit_codes import Exit
from poppy_tui.cli.home import require_existing_home
from tests.netguard.spec_company import SpecCompany


@pytest.fixture
def two_shops():
    with SpecCompany() as first, SpecCompany() as second:
        yield first, second


def test_an_ambiguous_name_lists_the_domains_and_removing_one_settles_it(cli, home, two_shops):
    first, second = two_shops
    assert cli("companies", "add", first.base_url).code == 0
    assert cli("companies", "add", second.base_url).code == 0
    run = cli("call", "larkspur", "POST", "/api/orders", "--body", "{}")
    assert run.code == Exit.USAGE and "ambiguous" in run.err and "unknown" not in run.err
    assert first.domain in run.err and second.domain in run.err and run.err.count("\n") == 1
    assert "ambiguous" in cli("history", "--company", "Larkspur Bicycle Works").err

    removed = cli("companies", "remove", first.domain)
    assert removed.code == 0 and "removed" in removed.out and first.domain in removed.out
    assert first.domain not in cli("companies", "list").out
    run = cli("call", "larkspur", "POST", "/api/orders", "--body", "{}")
    assert run.code == Exit.PENDING and second.api_requests and not first.api_requests


def test_removing_a_company_with_a_waiting_operation_is_refused(cli, home):
    with SpecCompany() as shop:
        assert cli("companies", "add", shop.base_url).code == 0
        assert cli("call", shop.domain, "POST", "/api/orders", "--body", "{}").code == Exit.PENDING
        run = cli("companies", "remove", shop.domain)
    assert run.code != 0 and "wait for a decision" in run.err
    assert shop.domain in cli("companies", "list").out


def test_unknown_is_still_unknown(cli, home):
    run = cli("call", "nobody", "GET", "/x")
    assert (
        run.code == Exit.ERROR
        and "unknown company 'nobody'" in run.err
        and "companies add" in run.err
    )


def test_add_localhost_without_a_scheme_suggests_http(cli, home):
    with SpecCompany() as shop:
        run = cli(
            "companies", "add", shop.domain
        )  # https first: a plain-http server answers garbage
    assert run.code != 0 and f"add it with: poppy-tui companies add http://{shop.domain}" in run.err
    assert "SSL" not in run.err and "did not answer over https" in run.err
    assert run.err.count("\n") == 1


def test_off_company_urls_get_one_message(cli, home):
    with SpecCompany() as shop, SpecCompany() as other:
        assert cli("companies", "add", shop.base_url).code == 0
        messages = []
        for url in (
            "https://evil.example/x",
            "http://evil.example/x",
            f"{other.base_url}/api/orders",
            "ftp://evil.example/x",
        ):
            run = cli("call", shop.domain, "GET", url)
            assert run.code != 0, url
            messages.append(run.err.replace(url, "URL"))
    assert (
        len(set(messages)) == 1
        and "is not one of Larkspur Bicycle Works' own addresses" in messages[0]
    )


def test_refresh_revalidates_and_reports_what_changed(cli, home):
    with SpecCompany() as shop:
        assert cli("companies", "add", shop.base_url).code == 0
        run = cli("companies", "refresh")
        assert run.code == 0 and "unchanged" in run.out
        assert shop.discovery_requests[-1].get("if-none-match") == '"v1"'
        shop.operations_versions, shop.etag = [], '"v2"'
        run = cli("companies", "refresh", shop.domain)
        assert run.code == 0 and "updated" in run.out and "operations v2: no" in run.out
        assert "no longer offers the operations extension v2" in run.err
        shop.discovery_override = "html"
        run = cli("companies", "refresh", shop.domain)
    assert (
        run.code == Exit.ERROR
        and "kept the stored poppy.json" in run.err
        and "text/html" in run.err
    )


def test_home_that_does_not_exist_is_refused_and_not_created(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("POPPY_TUI_HOME", raising=False)
    missing = tmp_path / "typo-home"
    run = cli("--home", str(missing), "pending")
    assert (
        run.code == Exit.USAGE and "doesn't exist" in run.err and f"mkdir -p {missing}" in run.err
    )
    assert not missing.exists()
    assert cli("companies", "list", "--home", str(missing)).code == Exit.USAGE
    assert (
        cli("--home", str(missing), "locate", "db").code == 0 and not missing.exists()
    )  # locate creates nothing


@pytest.mark.parametrize("command", [["pending"], ["companies", "list"], ["send"], ["mcp"]])
def test_a_poppy_tui_home_that_does_not_exist_is_refused_like_home(
    cli, tmp_path, monkeypatch, command
):
    """Walk C2: a mistyped POPPY_TUI_HOME silently started an empty home, which --home refuses."""
    missing = tmp_path / "missing-home-typo"
    monkeypatch.setenv("POPPY_TUI_HOME", str(missing))
    run = cli(*command)
    assert run.code == Exit.USAGE, (run.out, run.err)
    [line] = run.err.strip().splitlines()  # the fix in one line
    assert f"POPPY_TUI_HOME={missing} doesn't exist" in line and f"mkdir -p {missing}" in line
    assert not missing.exists()
    assert cli("locate", "db").code == 0 and not missing.exists()  # locate only prints
    missing.mkdir()  # the fix the line gives
    assert cli("pending").code == Exit.OK


def test_the_demos_home_named_before_any_demo_ran_says_to_start_the_demo(
    cli, tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("POPPY_TUI_HOME", raising=False)
    data = cli("locate", "data").out.strip()
    monkeypatch.setenv("POPPY_TUI_HOME", f"{data}/demo")  # README's two-window recipe
    run = cli("companies", "list")
    assert run.code == Exit.USAGE and "start the demo first" in run.err, run.err


def test_an_empty_poppy_tui_home_means_unset_and_a_home_that_cant_hold_one_is_refused(
    cli, tmp_path, monkeypatch
):
    monkeypatch.setenv("POPPY_TUI_HOME", "")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    assert cli("locate", "data").out.strip().startswith(str(tmp_path / "xdg"))
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        run = cli("--home", str(locked), "pending")
        if os.geteuid() != 0:  # root may write anywhere
            assert run.code == Exit.USAGE and "can't hold a poppy-tui home" in run.err, run.err
    finally:
        locked.chmod(0o700)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_home_that_does_not_exist_is_asked_about_at_a_terminal(tmp_path):
    missing = tmp_path / "new-home"
    asked: list[str] = []
    require_existing_home(
        str(missing), stdin=_Terminal(), stderr=_Terminal(), ask=lambda q: asked.append(q) or "y"
    )
    assert asked and str(missing) in asked[0]
    with pytest.raises(CliError, match="nothing was created"):
        require_existing_home(str(missing), stdin=_Terminal(), stderr=_Terminal(), ask=lambda q: "")
    require_existing_home(
        str(tmp_path), stdin=io.StringIO(), stderr=io.StringIO()
    )  # exists: no question


@pytest.mark.parametrize("etag", ['"v\u00e9"', '"v\u00c3\u00a9"', "v1", '"' + "a" * 400 + '"'])
def test_a_company_with_a_bad_etag_keeps_working_from_the_cli(cli, home, etag):
    # Once, a non-ASCII ETag was stored and sent back in If-None-Match: every later request to
    # that Company raised UnicodeEncodeError out of main().
    with SpecCompany(etag=etag, cache_control="no-store") as shop:
        assert cli("companies", "add", shop.base_url).code == 0
        refreshed = cli("companies", "refresh", shop.domain)
        assert (
            refreshed.code == 0
            and "unchanged" in refreshed.out
            and "Traceback" not in refreshed.err
        )
        called = cli("call", shop.domain, "POST", "/api/orders", "--body", "{}")
    assert called.code == Exit.PENDING and "Traceback" not in called.err
    assert all("if-none-match" not in seen for seen in shop.discovery_requests)


def test_the_demo_may_start_in_a_poppy_tui_home_that_does_not_exist_yet(cli, tmp_path, monkeypatch):
    """--demo makes its home afresh each time: a missing POPPY_TUI_HOME is not refused for it
    (here it stops at the next check, the terminal it needs, not at the home)."""
    monkeypatch.setenv("POPPY_TUI_HOME", str(tmp_path / "new"))
    run = cli("--demo")
    assert run.code == Exit.USAGE and "needs a terminal" in run.err and "exist" not in run.err
