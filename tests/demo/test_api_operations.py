"""The API side of the operations extension: asking (spec 4), the checks in their
order of outcomes (spec 6), and at most once (spec 7)."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime

import httpx
import pytest

from poppy_tui.demo.testing import AgentSession
from poppy_tui.protocol.approval import parse_approval_header
from tests.clock_waits import until_past_blocking
from tests.waiting import wait_until

from .helpers import SPEC_BODY, SPEC_PATH, SPEC_SUMMARY, approval_of, propose, send_approved

INSULATED_L = {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-l"}


def test_spec_example_end_to_end(company, http, agent):
    operation = propose(http, agent)
    assert operation["operation_id"] == "exc_5Rt2"
    assert operation["summary"] == SPEC_SUMMARY
    assert operation["terms"] == {
        "order_id": "ord_7Hk2",
        "item_id": "itm_4Qa",
        "replacement_sku": "stormline-insulated-m",
        "price_difference": {"amount": "70.00", "currency": "USD"},
    }
    assert re.fullmatch(r"\d{10}-[A-Za-z0-9_-]{12}", operation["revision"])
    assert company.state.performed("exc_5Rt2") == 0

    # The header exactly as the spec writes it, not as our encoder happens to.
    header = f'operation_id="exc_5Rt2", revision="{operation["revision"]}"'
    assert parse_approval_header(header) == approval_of(operation)
    headers = agent.headers()
    headers.update(
        {"Poppy-Approval": header, "Idempotency-Key": "9a3d7b2e-5c1f-4e8a-b6d0-2f7c4a1e9b3d"}
    )
    response = http.post(SPEC_PATH, json=SPEC_BODY, headers=headers)
    assert response.status_code == 201, response.text
    result = response.json()
    assert result["operation_id"] == "exc_5Rt2" and result["status"] == "completed"
    assert company.state.performed("exc_5Rt2") == 1

    # The agent can see the outcome in the order.
    order = http.get("/api/orders/ord_7Hk2", headers=agent.headers()).json()
    items = {i["item_id"]: i for i in order["items"]}
    assert items["itm_4Qa"]["status"] == "exchanged"
    assert items["itm_4Qa"]["exchange"]["operation_id"] == "exc_5Rt2"
    new_item = items[result["replacement_item_id"]]
    assert new_item["sku"] == "stormline-insulated-m" and new_item["replaces"] == "itm_4Qa"
    assert [(c["amount"]["amount"], c["operation_id"]) for c in order["charges"]] == [
        ("70.00", "exc_5Rt2")
    ]


def test_unknown_approval_members_are_ignored_and_idempotency_key_may_be_quoted(
    company, http, agent
):
    operation = propose(http, agent)
    headers = agent.headers()
    headers["Poppy-Approval"] = (
        f'operation_id="exc_5Rt2", revision="{operation["revision"]}", future=?1, note="x"'
    )
    headers["Idempotency-Key"] = '"9a3d7b2e-5c1f-4e8a-b6d0-2f7c4a1e9b3d"'
    assert http.post(SPEC_PATH, json=SPEC_BODY, headers=headers).status_code == 201


@pytest.mark.parametrize(
    "value", ["nonsense", 'operation_id=exc_5Rt2, revision="r"', 'revision="r"']
)
def test_a_malformed_approval_header_is_a_400(http, agent, value):
    propose(http, agent)
    headers = agent.headers()
    headers["Poppy-Approval"] = value
    response = http.post(SPEC_PATH, json=SPEC_BODY, headers=headers)
    assert response.status_code == 400 and response.json()["error"] == "invalid_approval"


# ----- negotiation (spec 2) ----------------------------------------------------------


@pytest.mark.parametrize(
    "extensions", [False, '"operations";v="3"', '"example.com/gift-wrap";v="1"', "not a list ((("]
)
def test_no_operations_without_the_extension(company, http, agent, extensions):
    response = http.post(SPEC_PATH, json=SPEC_BODY, headers=agent.headers(extensions=extensions))
    assert response.status_code == 403
    assert response.json()["error"] == "extension_required"
    assert response.json()["extension"] == "operations"
    assert "operation" not in response.json()
    assert company.state.performed("exc_5Rt2") == 0


def test_an_approval_without_the_extension_performs_nothing(company, http, agent):
    operation = propose(http, agent)
    headers = agent.headers(extensions=False, approval=approval_of(operation))
    response = http.post(SPEC_PATH, json=SPEC_BODY, headers=headers)
    assert response.json()["error"] == "extension_required"
    assert company.state.performed("exc_5Rt2") == 0


def test_a_company_on_another_major_does_not_use_v2(start):
    company = start(extension_version="3")
    agent = AgentSession.at(company)
    response = httpx.post(company.base_url + SPEC_PATH, json=SPEC_BODY, headers=agent.headers())
    assert response.status_code == 403
    assert response.json()["error"] == "extension_required" and "operation" not in response.json()


def test_a_company_without_the_extension_takes_approval_on_its_website(start):
    company = start(extension_version=None)
    agent = AgentSession.at(company)
    response = httpx.post(company.base_url + SPEC_PATH, json=SPEC_BODY, headers=agent.headers())
    assert response.status_code == 403
    assert (
        response.json()["error"] == "website_approval_required"
        and "operation" not in response.json()
    )


# ----- check 1: the Session can approve --------------------------------------------


def test_check1_another_sessions_approval_is_handled_as_no_approval(company, http, agent):
    operation = propose(http, agent)
    other = AgentSession.at(company)
    response = send_approved(http, other, operation)
    assert response.status_code == 403 and response.json()["error"] == "approval_required"
    fresh = response.json()["operation"]
    assert fresh["operation_id"] == "exc_5Rt2"
    assert fresh["revision"] != operation["revision"]
    assert company.state.performed("exc_5Rt2") == 0
    # The other Session can approve what it was given.
    assert send_approved(http, other, fresh).status_code == 201


def test_check1_comes_before_check2(company, http, agent):
    """Another Session naming a performed operation doesn't get its response."""
    operation = propose(http, agent)
    assert send_approved(http, agent, operation).status_code == 201
    other = AgentSession.at(company)
    response = send_approved(http, other, operation)
    assert response.status_code == 409 and response.json()["error"] == "already_exchanged"
    assert company.state.performed("exc_5Rt2") == 1


# ----- check 2: performed already, or being performed ----------------------------


def test_check2_a_retry_gets_the_first_response(company, http, agent):
    operation = propose(http, agent)
    first = send_approved(http, agent, operation, extra={"Idempotency-Key": "key-1"})
    again = send_approved(http, agent, operation, extra={"Idempotency-Key": "key-2"})
    without_key = send_approved(http, agent, operation)
    assert first.status_code == again.status_code == without_key.status_code == 201
    assert first.json() == again.json() == without_key.json()
    assert company.state.performed("exc_5Rt2") == 1


def test_check2_comes_before_check3(company, http, agent):
    """Even a request that now differs gets the replay once the operation is performed."""
    operation = propose(http, agent)
    first = send_approved(http, agent, operation)
    changed = send_approved(http, agent, operation, body=INSULATED_L)
    assert changed.status_code == 201 and changed.json() == first.json()
    assert company.state.performed("exc_5Rt2") == 1


async def test_check2_while_performing_is_503_with_retry_after(start):
    company = start("perform_seconds=1")
    agent = AgentSession.at(company)
    async with httpx.AsyncClient(base_url=company.base_url, timeout=10) as client:
        response = await client.post(SPEC_PATH, json=SPEC_BODY, headers=agent.headers())
        operation = response.json()["operation"]

        def approved():
            return client.post(
                SPEC_PATH, json=SPEC_BODY, headers=agent.headers(approval=approval_of(operation))
            )

        first = asyncio.ensure_future(approved())
        await wait_until(  # until the Company is performing the first (for 1 s)
            lambda: company.desk.in_progress(operation["operation_id"]),
            step=0.01,
            describe="the first approved request performing",
        )
        duplicate = await approved()
        assert duplicate.status_code == 503
        assert duplicate.headers["Retry-After"] == "1"
        assert duplicate.json()["error"] == "operation_in_progress"
        assert (await first).status_code == 201
        assert (await approved()).json() == (await first).json()
    assert company.state.performed("exc_5Rt2") == 1


async def test_twenty_concurrent_approvals_perform_once(start):
    company = start("perform_seconds=0.3")
    agent = AgentSession.at(company)
    async with httpx.AsyncClient(
        base_url=company.base_url, timeout=20, limits=httpx.Limits(max_connections=40)
    ) as client:
        response = await client.post(SPEC_PATH, json=SPEC_BODY, headers=agent.headers())
        operation = response.json()["operation"]
        responses = await asyncio.gather(
            *(
                client.post(
                    SPEC_PATH,
                    json=SPEC_BODY,
                    headers=agent.headers(approval=approval_of(operation)),
                )
                for _ in range(20)
            )
        )
        statuses = [r.status_code for r in responses]
        assert set(statuses) <= {201, 503}, statuses
        bodies = {r.text for r in responses if r.status_code == 201}
        assert len(bodies) == 1
        assert all(r.headers["Retry-After"] == "1" for r in responses if r.status_code == 503)
        # After the dust settles (the 201 came once performing ended), everyone retrying gets
        # the same first response.
        assert not company.desk.in_progress(operation["operation_id"])
        retries = await asyncio.gather(
            *(
                client.post(
                    SPEC_PATH,
                    json=SPEC_BODY,
                    headers=agent.headers(approval=approval_of(operation)),
                )
                for _ in range(20)
            )
        )
        assert {r.status_code for r in retries} == {201}
        assert {r.text for r in retries} == bodies
    assert company.state.performed("exc_5Rt2") == 1
    order = company.state.order("ord_7Hk2")
    assert len(order.items) == 3 and len(order.charges) == 1


# ----- check 3: the revision, its expiry, and what the request asks -----------------


def test_check3_a_different_request_gets_a_new_revision_of_the_same_operation(company, http, agent):
    operation = propose(http, agent)
    response = send_approved(http, agent, operation, body=INSULATED_L)
    assert response.status_code == 403
    fresh = response.json()["operation"]
    assert fresh["operation_id"] == operation["operation_id"] == "exc_5Rt2"
    assert fresh["revision"] != operation["revision"]
    assert fresh["terms"]["replacement_sku"] == "stormline-insulated-l"
    assert fresh["terms"]["price_difference"] == {"amount": "80.00", "currency": "USD"}
    assert "$80.00 more" in fresh["summary"]
    assert company.state.performed("exc_5Rt2") == 0
    # The new revision approves the new request, and only that.
    assert send_approved(http, agent, fresh, body=SPEC_BODY).status_code == 403
    assert send_approved(http, agent, fresh, body=INSULATED_L).status_code == 201
    assert company.state.order("ord_7Hk2").items[-1].sku == "stormline-insulated-l"


def test_check3_an_unknown_revision_gets_a_new_one(company, http, agent):
    operation = propose(http, agent)
    made_up = dict(operation, revision="1791487200-k3Jd9Qx2mW8v")
    response = send_approved(http, agent, made_up)
    assert response.status_code == 403
    assert response.json()["operation"]["revision"] not in (made_up["revision"], "")
    assert company.state.performed("exc_5Rt2") == 0


def test_check3_an_expired_revision_gets_a_new_one(start):
    company = start(expiry_seconds=1)
    agent = AgentSession.at(company)
    with httpx.Client(base_url=company.base_url) as http:
        operation = propose(http, agent)
        until_past_blocking(datetime.fromisoformat(operation["expires_at"]))
        response = send_approved(http, agent, operation)
        assert response.status_code == 403
        fresh = response.json()["operation"]
        assert (
            fresh["revision"] != operation["revision"]
            and fresh["expires_at"] != operation["expires_at"]
        )
        assert company.state.performed("exc_5Rt2") == 0
        assert send_approved(http, agent, fresh).status_code == 201


def test_check3_a_revision_from_another_interface_or_endpoint_is_not_this_request(
    company, http, agent
):
    """The revision must come from the request that is approved: here the cancel endpoint's
    approval is sent to the exchange endpoint."""
    cancel = propose(http, agent, "/api/subscriptions/sub_6Tc1/cancel", body={})
    response = http.post(
        SPEC_PATH, json=SPEC_BODY, headers=agent.headers(approval=approval_of(cancel))
    )
    assert response.status_code == 403 and response.json()["error"] == "approval_required"
    assert company.state.performed(cancel["operation_id"]) == 0
    assert company.state.performed("exc_5Rt2") == 0


def test_never_answers_an_approval_with_the_revision_it_names(start):
    company = start("expired")  # every revision expires at once: the worst case for loops
    agent = AgentSession.at(company)
    with httpx.Client(base_url=company.base_url) as http:
        operation = propose(http, agent)
        for _ in range(5):
            response = send_approved(http, agent, operation)
            assert response.status_code == 403
            fresh = response.json()["operation"]
            assert fresh["operation_id"] == operation["operation_id"]
            assert fresh["revision"] != operation["revision"]
            operation = fresh
    assert company.state.performed("exc_5Rt2") == 0


def test_different_terms_never_share_a_revision(company, http, agent):
    by_revision: dict[str, str] = {}
    for sku in ["stormline-insulated-m", "stormline-insulated-l", "stormline-l"] * 3:
        operation = propose(http, agent, body={"item_id": "itm_4Qa", "replacement_sku": sku})
        assert operation["operation_id"] == "exc_5Rt2"
        assert by_revision.setdefault(operation["revision"], sku) == sku


# ----- the other actions -------------------------------------------------------------


def test_cancel_subscription(company, http, agent):
    path = "/api/subscriptions/sub_6Tc1/cancel"
    operation = propose(http, agent, path, body={})
    assert operation["terms"]["refund"] == {"amount": "0.00", "currency": "USD"}
    assert "isn't refunded" in operation["summary"] and "$18.00 a month" in operation["summary"]
    empty_body = http.post(path, headers=agent.headers(approval=approval_of(operation)))
    assert empty_body.status_code == 200 and empty_body.json()["status"] == "cancelled"
    assert (
        http.get("/api/subscriptions/sub_6Tc1", headers=agent.headers()).json()["status"]
        == "cancelled"
    )
    again = http.post(path, json={}, headers=agent.headers())
    assert again.status_code == 409 and again.json()["error"] == "already_cancelled"


def test_change_booking_normalises_the_time_and_charges_the_fee(company, http, agent):
    path = "/api/bookings/bkg_2Fm8/change"
    booking = http.get("/api/bookings/bkg_2Fm8", headers=agent.headers()).json()
    from datetime import datetime, timedelta

    current = datetime.fromisoformat(booking["starts_at"])
    new_local = (current + timedelta(days=1)).replace(hour=15, minute=30)
    operation = propose(http, agent, path, body={"starts_at": new_local.isoformat()})
    assert operation["terms"]["change_fee"] == {"amount": "10.00", "currency": "USD"}
    assert operation["terms"]["previous_starts_at"] == booking["starts_at"]
    # The same instant in UTC is the same request.
    in_utc = new_local.astimezone(__import__("datetime").timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    response = http.post(
        path, json={"starts_at": in_utc}, headers=agent.headers(approval=approval_of(operation))
    )
    assert response.status_code == 200, response.text
    assert datetime.fromisoformat(response.json()["starts_at"]) == new_local
    assert response.json()["charges"][0]["amount"]["amount"] == "10.00"
    # A later change is a new action with a new operation id.
    later = propose(
        http, agent, path, body={"starts_at": (new_local + timedelta(days=1)).isoformat()}
    )
    assert later["operation_id"] != operation["operation_id"]


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("/api/orders/ord_nope/exchanges", SPEC_BODY, 404, "order_not_found"),
        (
            SPEC_PATH,
            {"item_id": "itm_nope", "replacement_sku": "stormline-l"},
            404,
            "item_not_found",
        ),
        (
            SPEC_PATH,
            {"item_id": "itm_4Qa", "replacement_sku": "no-such-sku"},
            404,
            "product_not_found",
        ),
        (SPEC_PATH, {"item_id": "itm_4Qa", "replacement_sku": "stormline-m"}, 422, "same_product"),
        (
            SPEC_PATH,
            {"item_id": "itm_4Qa", "replacement_sku": "ridgeline-daypack-28"},
            422,
            "not_exchangeable_for",
        ),
        (
            "/api/orders/ord_3Pz9/exchanges",
            {"item_id": "itm_2Lc", "replacement_sku": "stormline-l"},
            409,
            "item_not_exchangeable",
        ),
        (SPEC_PATH, {"item_id": "itm_4Qa"}, 400, "invalid_request"),
        (SPEC_PATH, [1, 2], 400, "invalid_request"),
        ("/api/bookings/bkg_2Fm8/change", {"starts_at": "tomorrow"}, 400, "invalid_request"),
        (
            "/api/bookings/bkg_2Fm8/change",
            {"starts_at": "2020-01-01T10:00:00Z"},
            422,
            "slot_unavailable",
        ),
        ("/api/subscriptions/sub_nope/cancel", {}, 404, "subscription_not_found"),
    ],
)
def test_requests_the_shop_refuses_return_no_operation(http, agent, path, body, status, code):
    response = http.post(path, json=body, headers=agent.headers())
    assert response.status_code == status, response.text
    assert response.json()["error"] == code and "operation" not in response.json()


def test_reads(http, agent):
    orders = http.get("/api/orders", headers=agent.headers()).json()["orders"]
    assert [o["order_id"] for o in orders] == ["ord_7Hk2", "ord_3Pz9", "ord_5Mx3"]
    products = http.get(
        "/api/products", params={"q": "stormline insulated"}, headers=agent.headers()
    ).json()["products"]
    assert {p["sku"]: p["price"]["amount"] for p in products} == {
        "stormline-insulated-m": "199.00",
        "stormline-insulated-l": "209.00",
    }
    assert http.get("/api/orders/ord_nope", headers=agent.headers()).status_code == 404


# ----- Idempotency-Key (draft-ietf-httpapi-idempotency-key-header 2.7) --------------------------


def _post(http, agent, body, key, path=SPEC_PATH, **extra):
    headers = agent.headers(**extra)
    headers["Idempotency-Key"] = key
    return http.post(path, json=body, headers=headers)


def test_a_reused_idempotency_key_with_another_body_is_a_422(company, http, agent):
    assert (
        _post(http, agent, SPEC_BODY, "key-reused").status_code == 403
    )  # approval_required, key remembered
    refused = _post(http, agent, INSULATED_L, "key-reused")
    assert refused.status_code == 422 and refused.json()["error"] == "idempotency_key_reused"
    assert "different request" in refused.json()["error_description"]
    # The same key written as an sf-string is the same key.
    assert _post(http, agent, INSULATED_L, '"key-reused"').status_code == 422
    # The same request again with that key is no reuse: it gets its answer.
    again = _post(http, agent, SPEC_BODY, "key-reused")
    assert again.status_code == 403 and again.json()["error"] == "approval_required"
    # Another path with the same key and body is another request.
    other_path = _post(http, agent, {}, "key-reused", path="/api/subscriptions/sub_6Tc1/cancel")
    assert other_path.status_code == 422
    # Keys are per client: another Session may use the same key for its own request.
    other = AgentSession.at(company)
    assert _post(http, other, INSULATED_L, "key-reused").status_code == 403
    assert company.state.performed("exc_5Rt2") == 0


def test_a_retried_approval_with_its_key_is_not_a_reuse(company, http, agent):
    operation = propose(http, agent)
    first = send_approved(http, agent, operation, extra={"Idempotency-Key": "approval-key"})
    again = send_approved(http, agent, operation, extra={"Idempotency-Key": "approval-key"})
    assert first.status_code == again.status_code == 201 and first.json() == again.json()
    changed = send_approved(
        http, agent, operation, body=INSULATED_L, extra={"Idempotency-Key": "approval-key"}
    )
    assert changed.status_code == 422
    assert company.state.performed("exc_5Rt2") == 1


@pytest.mark.parametrize("key", [b"", b"a b", b"x" * 256, "caf\u00e9".encode()])
def test_a_malformed_idempotency_key_is_a_400(http, agent, key):
    response = _post(http, agent, SPEC_BODY, key)  # bytes: sent as they are, UTF-8 included
    assert response.status_code == 400 and "Idempotency-Key" in response.json()["error_description"]
