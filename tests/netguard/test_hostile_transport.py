"""Hostile transport (docs/protocol-choices.md, "Hostile transport"; Company content is untrusted,
Ops §8), over real loopback HTTP: a Company that trickles bytes inside every read timeout, loops
redirects, sends a huge or a non-JSON document, or JSON with duplicate member names. Each ends in
one line that says what went wrong."""

from __future__ import annotations

import pytest

from poppy_tui.agent.companies import DiscoveryError, discover, fetch_json
from poppy_tui.agent.net.http import make_client, overall_deadline, parse_json_body, request
from poppy_tui.agent.store import Store
from poppy_tui.protocol.jsonlimits import (
    DuplicateMember,
    NonFiniteNumber,
    loads_bounded,
    loads_strict,
)
from poppy_tui.protocol.outcomes import Unknown

from tests.netguard.spec_company import SpecCompany
from tests.netguard.tls import make_certificates

READ_TIMEOUT = 1.0  # each trickled byte arrives well inside it (0.3 s apart)


def test_duplicate_members_are_refused_naming_the_member_at_any_depth():
    with pytest.raises(DuplicateMember, match="'amount'"):
        loads_strict(b'{"terms": {"price": [{"amount": "7.00", "amount": "700.00"}]}}')
    with pytest.raises(ValueError, match="malformed.*'summary'"):
        parse_json_body(b'{"operation": {"summary": "a", "summary": "b"}}')
    with pytest.raises(ValueError, match="malformed.*'x'"):
        loads_bounded('{"x": 1, "x": 1}', 1000)
    # The same name in two different objects is fine.
    assert loads_strict(b'{"a": {"n": 1}, "b": {"n": 2}}') == {"a": {"n": 1}, "b": {"n": 2}}


@pytest.mark.parametrize(
    "number", ["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "123456789e999"]
)
def test_numbers_json_does_not_have_or_a_double_cannot_hold_are_refused(number):
    # Python's json reads all of these (NaN as nan, 1e999 as inf); I-JSON (RFC 7493 2.2) doesn't.
    with pytest.raises(NonFiniteNumber, match="not a finite number"):
        loads_strict(f'{{"terms": {{"price": {{"amount": {number}}}}}}}')
    with pytest.raises(ValueError, match="malformed.*not a finite number"):
        parse_json_body(f'{{"operation": {{"n": [{number}]}}}}'.encode())
    with pytest.raises(ValueError, match="malformed.*not a finite number"):
        loads_bounded(f"[{number}]", 1000)


def test_finite_numbers_at_the_edges_of_a_double_are_read_as_they_are():
    value = loads_strict(b"[1.7976931348623157e308, -1e308, 5e-324, 1e-400, 0.1, 10, -0.0]")
    assert value[:3] == [1.7976931348623157e308, -1e308, 5e-324]
    assert value[3] == 0.0 and value[4] == 0.1 and value[5] == 10 and isinstance(value[5], int)


async def test_a_trickled_body_is_abandoned_at_the_overall_deadline():
    with SpecCompany() as company:
        async with make_client(READ_TIMEOUT) as client:
            answer = await request(client, "GET", f"{company.base_url}/trickle-body")
    assert answer.status == 200 and answer.cut_off
    assert f"longer than {overall_deadline(READ_TIMEOUT):g} s" in answer.error


async def test_trickled_headers_are_abandoned_as_an_unknown_outcome():
    with SpecCompany() as company:
        async with make_client(READ_TIMEOUT) as client:
            answer = await request(client, "GET", f"{company.base_url}/trickle-headers")
    assert isinstance(answer, Unknown) and "overall deadline" in answer.detail


async def test_a_long_poll_gets_its_hold_time_on_top_of_the_deadline():
    with SpecCompany(trickle_delay=0.02) as company:
        async with make_client(READ_TIMEOUT) as client:
            # 200 bytes 0.02 s apart: 4 s, more than 2 s, less than 2 s + a 20 s hold.
            answer = await request(
                client, "GET", f"{company.base_url}/trickle-body", extra_read_seconds=20.0
            )
    assert answer.status == 200 and not answer.cut_off and answer.body == "a" * 200


async def test_discovery_errors_are_one_line_each(tmp_path):
    store = Store.open(tmp_path / "store.db")
    try:
        with SpecCompany() as company:
            async with make_client(READ_TIMEOUT) as client:
                cases = {
                    "bloat": "more than the 1048576 bytes allowed",
                    "html": "is not JSON (text/html)",
                    "trickle-body": "overall deadline",
                    "duplicate-domain": "malformed: the member 'name' appears twice",
                }
                for mode, expected in cases.items():
                    company.discovery_override = mode
                    with pytest.raises(DiscoveryError) as caught:
                        await discover(client, store, company.base_url, True)
                    message = str(caught.value)
                    assert expected in message, (mode, message)
                    assert "\n" not in message
                assert store.list_companies() == []  # nothing half-read was kept
    finally:
        store.close()


async def test_a_redirect_loop_is_one_line_over_real_tls(tmp_path, monkeypatch):
    # Redirects must stay on https, so the loop runs over TLS (a test CA trusted via SSL_CERT_FILE).
    certificates = make_certificates(tmp_path / "tls")
    monkeypatch.setenv("SSL_CERT_FILE", str(certificates.ca_file))
    server_names: list[str | None] = []
    with SpecCompany(tls=certificates.server_context(server_names)) as company:
        async with make_client(READ_TIMEOUT) as client:
            with pytest.raises(DiscoveryError) as caught:
                await fetch_json(client, f"{company.base_url}/loop-a", True, 1 << 20, "poppy.json")
    message = str(caught.value)
    assert (
        "redirects in a loop" in message
        and "/loop-a again after 2 hops" in message
        and "\n" not in message
    )
    assert server_names and set(server_names) == {"localhost"}  # SNI kept the Company's name


async def test_an_operation_with_two_summaries_is_refused_naming_the_member(make_agent):
    with SpecCompany() as company:
        agent = make_agent()
        record = await agent.add_company(company.base_url)
        result = await agent.call_api(record, "POST", "/api/duplicate-summary", {"x": 1})
    assert result.outcome != "operation" and result.operation_row is None
    assert "'summary' appears twice" in result.detail


async def test_an_operation_with_an_infinite_amount_is_refused(make_agent):
    with SpecCompany() as company:
        agent = make_agent()
        record = await agent.add_company(company.base_url)
        result = await agent.call_api(record, "POST", "/api/infinite-amount", {"x": 1})
    assert result.outcome != "operation" and result.operation_row is None
    assert "'1e999' is not a finite number" in result.detail


@pytest.mark.parametrize("sse", [False, True], ids=["json", "event-stream"])
async def test_an_mcp_tool_result_with_nan_is_refused_before_the_sdk_reads_it(make_agent, sse):
    with SpecCompany(mcp_sse=sse, mcp_nan=True) as company:
        agent = make_agent(request_timeout_seconds=2.0)
        record = await agent.add_company(company.base_url)
        result = await agent.call_tool(record, "order_bike", {})
    assert result.outcome != "operation" and result.operation_row is None
    assert "'NaN' is not a finite number" in result.detail and "tools/call" in result.detail


@pytest.mark.parametrize("sse", [False, True], ids=["json", "event-stream"])
async def test_an_mcp_tool_result_with_two_summaries_is_refused_naming_the_member(make_agent, sse):
    with SpecCompany(mcp_sse=sse) as company:
        agent = make_agent(request_timeout_seconds=2.0)
        record = await agent.add_company(company.base_url)
        assert [t["name"] for t in await agent.list_tools(record)] == ["order_bike"]
        result = await agent.call_tool(record, "order_bike", {})
    assert result.outcome != "operation" and result.operation_row is None
    assert "'summary' appears twice" in result.detail and "tools/call" in result.detail


async def test_an_mcp_call_trickled_forever_is_abandoned_as_unknown(make_agent):
    with SpecCompany(mcp_trickle=True) as company:
        agent = make_agent(request_timeout_seconds=1.0)
        record = await agent.add_company(company.base_url)
        result = await agent.call_tool(record, "order_bike", {})
    # The call left, so whether it took effect is unknown; what matters is that it ended.
    assert result.outcome == "unknown" and "in time" in result.detail
