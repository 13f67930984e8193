"""poppy.json caching (digest 1.1; conformance rows A4, X11), on the agent side, against the
spec-only test Company: Cache-Control and ETag honoured within [1 minute, 1 day], a conditional GET before a new
request decides whether to declare the extension, `extension_required` explained on its own,
and removing a Company."""

from __future__ import annotations

from datetime import timedelta

import pytest

from poppy_tui.agent.store.store import StateError
from poppy_tui.protocol.conventions import DISCOVERY_MAX_FRESH_SECONDS, DISCOVERY_MIN_FRESH_SECONDS
from poppy_tui.protocol.discovery import freshness_seconds
from poppy_tui.protocol.timestamps import utcnow

from tests.netguard.spec_company import SpecCompany


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"cache-control": "max-age=300"}, 300),
        ({"cache-control": "public, max-age=5"}, DISCOVERY_MIN_FRESH_SECONDS),
        ({"cache-control": "max-age=99999999"}, DISCOVERY_MAX_FRESH_SECONDS),
        ({"cache-control": "no-store"}, DISCOVERY_MIN_FRESH_SECONDS),
        ({"cache-control": "no-cache, max-age=600"}, DISCOVERY_MIN_FRESH_SECONDS),
        (
            {"expires": "Thu, 01 Dec 2094 16:00:00 GMT", "date": "Thu, 01 Dec 2094 15:50:00 GMT"},
            600,
        ),
        ({"expires": "0"}, DISCOVERY_MIN_FRESH_SECONDS),
        ({}, 3600),
    ],
)
def test_freshness_follows_the_caching_headers_within_bounds(headers, seconds):
    assert freshness_seconds(headers) == seconds


def _expire(agent, company) -> None:
    """As if the cached copy's freshness had run out (the stored state, not the clock, moves)."""
    etag, _ = agent.store.document_cache(company.id)
    agent.store.keep_document_fresh(company.id, etag, utcnow() - timedelta(seconds=1))


async def test_a_fresh_copy_is_used_and_a_stale_one_revalidated_with_its_etag(make_agent):
    with SpecCompany(cache_control="max-age=300") as shop:
        agent = make_agent()
        company = await agent.add_company(shop.base_url)
        etag, fresh_until = agent.store.document_cache(company.id)
        assert etag == '"v1"'
        assert timedelta(seconds=290) < fresh_until - utcnow() <= timedelta(seconds=300)
        assert len(shop.discovery_requests) == 1

        result = await agent.call_api(company, "POST", "/api/orders", {"bike": "commuter"})
        assert result.outcome == "operation"
        assert len(shop.discovery_requests) == 1  # still fresh: not fetched again

        _expire(agent, company)
        await agent.call_api(company, "POST", "/api/orders", {"bike": "commuter"})
        assert len(shop.discovery_requests) == 2
        assert shop.discovery_requests[-1].get("if-none-match") == '"v1"'  # answered 304
        assert agent.store.document_cache(company.id)[1] > utcnow() + timedelta(seconds=290)


async def test_a_changed_document_decides_what_the_next_request_declares(make_agent):
    with SpecCompany() as shop:
        agent = make_agent()
        company = await agent.add_company(shop.base_url)
        assert company.supports_operations
        shop.operations_versions, shop.etag = [], '"v2"'  # the Company stops offering operations
        _expire(agent, company)
        result = await agent.call_api(company, "POST", "/api/orders", {"bike": "commuter"})
        assert "poppy-extensions" not in shop.api_requests[-1]  # read the new document first
        assert not agent.store.get_company(company.id).supports_operations
        assert result.outcome == "not_performed"
        assert "doesn't offer it" in result.detail and "Nothing was done" in result.detail
        assert "approve it on Larkspur Bicycle Works' own site" in result.detail


async def test_extension_required_from_a_company_on_another_major_version(make_agent):
    with SpecCompany(operations_versions=["3"]) as shop:
        agent = make_agent()
        company = await agent.add_company(shop.base_url)
        result = await agent.call_api(company, "POST", "/api/orders", {"bike": "commuter"})
    assert result.outcome == "not_performed" and result.operation_row is None
    assert "a version poppy-tui doesn't speak" in result.detail and "'3'" in result.detail
    assert (
        "Approve this order on larkspur's website." in result.detail
    )  # its own description, quoted


async def test_extension_required_after_an_out_of_date_copy_rereads_it(make_agent):
    with SpecCompany(operations_versions=[]) as shop:
        agent = make_agent()
        company = await agent.add_company(shop.base_url)
        shop.operations_versions, shop.etag = ["2"], '"v2"'  # changed while our copy is still fresh
        first = await agent.call_api(company, "POST", "/api/orders", {"bike": "commuter"})
        assert first.outcome == "not_performed"
        assert "it now does: send the request again" in first.detail
        assert shop.discovery_requests[-1].get("if-none-match") == '"v1"'
        again = await agent.call_api(company, "POST", "/api/orders", {"bike": "commuter"})
        assert again.outcome == "operation"
        assert shop.api_requests[-1].get("poppy-extensions") == '"operations";v="2"'


async def test_a_failed_refresh_keeps_the_stored_copy_and_tries_again_later(make_agent):
    with SpecCompany() as shop:
        agent = make_agent()
        company = await agent.add_company(shop.base_url)
        shop.discovery_override = "html"  # the Company's site now answers with a web page
        refreshed = await agent.refresh_company(company, force=True)
    assert (
        refreshed.fetched
        and not refreshed.changed
        and "is not JSON (text/html)" in refreshed.problem
    )
    assert refreshed.company.document == company.document and refreshed.company.supports_operations
    retry_at = agent.store.document_cache(company.id)[1]
    assert utcnow() < retry_at <= utcnow() + timedelta(seconds=DISCOVERY_MIN_FRESH_SECONDS)


async def test_removing_a_company_keeps_its_records_and_waits_for_open_operations(make_agent):
    with SpecCompany() as shop:
        agent = make_agent()
        company = await agent.add_company(shop.base_url)
        result = await agent.call_api(company, "POST", "/api/orders", {"bike": "commuter"})
        with pytest.raises(StateError, match="1 operation"):
            agent.remove_company(company)
        agent.decline(
            result.operation_row, agent.store.get_operation(result.operation_row).current.id
        )
        agent.remove_company(company)
        assert agent.store.list_companies() == [] and agent.find_company(shop.domain) is None
        assert (
            agent.store.get_operation(result.operation_row).company.name == "Larkspur Bicycle Works"
        )
        back = await agent.add_company(
            shop.base_url
        )  # adding it again brings it back, same identity
    assert (back.id, back.user_id) == (company.id, company.user_id)
    assert [c.id for c in agent.store.list_companies()] == [company.id]


async def test_extension_required_in_a_conversation_is_explained_too(make_agent):
    from poppy_tui.agent.agent import AgentError

    with SpecCompany(operations_versions=[]) as shop:
        agent = make_agent()
        company = await agent.add_company(shop.base_url)
        with pytest.raises(AgentError) as caught:
            await agent.say(company, "I'd like the commuter bike")
    message = str(caught.value)
    assert "did not start the conversation" in message and "doesn't offer it" in message
    assert "Nothing was done" in message


async def test_a_company_without_etags_is_refetched_and_an_identical_document_is_unchanged(
    make_agent,
):
    with SpecCompany(etag="", cache_control=None) as shop:
        agent = make_agent()
        company = await agent.add_company(shop.base_url)
        assert agent.store.document_cache(company.id)[0] in (None, "")
        refreshed = await agent.refresh_company(company, force=True)
        assert refreshed.fetched and not refreshed.changed and not refreshed.problem
        assert "if-none-match" not in shop.discovery_requests[-1]
        shop.operations_versions = ["3"]
        refreshed = await agent.refresh_company(company, force=True)
    assert refreshed.changed and not refreshed.company.supports_operations


async def test_a_loopback_company_once_loopback_is_off_keeps_its_copy(make_agent, paths):
    with SpecCompany() as shop:
        company = await make_agent().add_company(shop.base_url)
        strict = make_agent(allow_loopback=False)
        refreshed = await strict.refresh_company(company, force=True)
    assert (
        "can't be used now" in refreshed.problem and refreshed.company.document == company.document
    )


@pytest.mark.parametrize(
    ("cache_control", "seconds"),
    [
        (
            "max-age=" + "9" * 5000,
            DISCOVERY_MAX_FRESH_SECONDS,
        ),  # more digits than int() takes: clamped
        ("max-age=99999999999999999999", DISCOVERY_MAX_FRESH_SECONDS),
        (
            "max-age=-5",
            DISCOVERY_MIN_FRESH_SECONDS,
        ),  # invalid: stale (RFC 9111 4.2.1), not the default
        ("max-age=abc", DISCOVERY_MIN_FRESH_SECONDS),
        ("max-age=1e9", DISCOVERY_MIN_FRESH_SECONDS),
        ("max-age=", DISCOVERY_MIN_FRESH_SECONDS),
        ("max-age", DISCOVERY_MIN_FRESH_SECONDS),
        ('max-age="600"', 600),  # quoted: tolerated (RFC 9111 5.2)
        ("Max-Age=600", 600),
        ("s-maxage=10, max-age=900", 900),
    ],
)
def test_a_hostile_max_age_is_clamped_or_stale_never_a_traceback(cache_control, seconds):
    assert freshness_seconds({"cache-control": cache_control}) == seconds


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ('"v1"', '"v1"'),  # strong
        ('W/"v1"', 'W/"v1"'),  # weak: If-None-Match compares weakly
        ('""', '""'),  # empty opaque-tag is an entity-tag too
        ("v1", None),  # unquoted
        ('w/"v1"', None),  # the weak prefix is case-sensitive (%s"W/")
        ('"v 1"', None),  # a space is not an etagc
        ('"v"1"', None),
        ('"' + "a" * 255 + '"', None),  # 257 characters: beyond the limit
        ('"' + "a" * 254 + '"', '"' + "a" * 254 + '"'),  # 256: at the limit
        ('"v\u00e9"', None),  # Latin-1 byte
        ('"v\u00c3\u00a9"', None),  # UTF-8 bytes of é
    ],
)
async def test_only_a_valid_ascii_entity_tag_is_kept_and_sent_back(make_agent, sent, kept):
    with SpecCompany(etag=sent) as shop:
        agent = make_agent()
        company = await agent.add_company(shop.base_url)
        assert agent.store.document_cache(company.id)[0] == kept
        refreshed = await agent.refresh_company(company, force=True)
        assert refreshed.fetched and not refreshed.problem
        assert shop.discovery_requests[-1].get("if-none-match") == kept
        result = await agent.call_api(company, "POST", "/api/orders", {"bike": "commuter"})
    assert result.outcome == "operation"


@pytest.mark.parametrize("on_304", ['"' + "a" * 300 + '"', '"v\u00e9"', "unquoted", 'W/"v1"'])
async def test_an_etag_a_304_carries_is_checked_like_one_a_200_carries(make_agent, on_304):
    with SpecCompany(etag='"v1"', etag_on_304=on_304) as shop:
        agent = make_agent()
        company = await agent.add_company(shop.base_url)
        refreshed = await agent.refresh_company(company, force=True)
        assert refreshed.fetched and not refreshed.changed and not refreshed.problem
        stored = agent.store.document_cache(company.id)[0]
        assert stored == (on_304 if on_304 == 'W/"v1"' else '"v1"')  # a bad one leaves the old tag
        await agent.refresh_company(company, force=True)
    assert shop.discovery_requests[-1].get("if-none-match") == stored


@pytest.mark.parametrize("stored", ['"v\u00e9"', '"v\u2603"', '"a\r\nX-Injected: 1"', "x" * 5000])
async def test_a_bad_etag_stored_by_an_older_version_is_not_sent(make_agent, stored):
    with SpecCompany() as shop:
        agent = make_agent()
        company = await agent.add_company(shop.base_url)
        agent.store.keep_document_fresh(company.id, stored, utcnow() - timedelta(seconds=1))
        result = await agent.call_api(company, "POST", "/api/orders", {"bike": "commuter"})
        assert result.outcome == "operation"
        assert "if-none-match" not in shop.discovery_requests[-1]
        assert "x-injected" not in shop.discovery_requests[-1]
    assert agent.store.document_cache(company.id)[0] == '"v1"'  # replaced by the Company's good one
