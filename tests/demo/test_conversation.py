"""Conversations with the scripted Company Agent."""

from __future__ import annotations

import time

import httpx
import pytest

from poppy_tui.demo.testing import AgentSession
from poppy_tui.protocol.approval import approval_to_message_extensions
from poppy_tui.protocol.ids import new_id
from poppy_tui.protocol.operation import operation_from_message

from .helpers import SPEC_SUMMARY, approval_of

ENDPOINT = "/poppy/conversations"


def message(text: str | None = None, approval=None, **extra) -> dict:
    msg = {"id": new_id("msg_"), "author": {"type": "agent"}, **extra}
    if text is not None:
        msg["text"] = text
    if approval is not None:
        msg["extensions"] = approval_to_message_extensions(approval)
    return msg


class Chat:
    def __init__(self, http: httpx.Client, agent: AgentSession, extensions=True) -> None:
        self.http, self.agent, self.extensions = http, agent, extensions
        self.conversation_id: str | None = None

    def send(self, msg: dict) -> httpx.Response:
        headers = self.agent.headers(extensions=self.extensions)
        if self.conversation_id is None:
            response = self.http.post(ENDPOINT, json={"message": msg}, headers=headers)
            if response.status_code == 201:
                self.conversation_id = response.json()["conversation_id"]
            return response
        return self.http.post(
            f"{ENDPOINT}/{self.conversation_id}/messages", json={"message": msg}, headers=headers
        )

    def say(self, text: str | None = None, approval=None) -> list[dict]:
        """The Company's messages in reply."""
        response = self.send(message(text, approval))
        assert response.status_code in (201, 202), response.text
        return [
            e["message"]
            for e in response.json()["events"]
            if e["type"] == "message" and e["message"]["role"] == "company"
        ]


@pytest.fixture
def chat(http, agent) -> Chat:
    return Chat(http, agent)


def test_create_and_send_shapes(http, agent):
    created = http.post(ENDPOINT, json={"message": message("hello")}, headers=agent.headers())
    assert created.status_code == 201
    body = created.json()
    assert set(body) >= {"conversation_id", "events", "cursor"}
    user, company = body["events"]
    assert (
        user["type"] == "message"
        and user["message"]["role"] == "user"
        and user["message"]["text"] == "hello"
    )
    assert company["message"]["role"] == "company" and company["message"]["author"] == {
        "type": "agent"
    }
    assert all(set(e) >= {"id", "type", "created_at", "message"} for e in body["events"])
    sent = http.post(
        f"{ENDPOINT}/{body['conversation_id']}/messages",
        json={"message": message("where is my order?")},
        headers=agent.headers(),
    )
    assert sent.status_code == 202
    assert set(sent.json()) >= {"events", "cursor"}
    assert "ord_7Hk2" in sent.json()["events"][-1]["message"]["text"]


def test_exchange_size_change_and_approval(company, chat):
    [proposal] = chat.say("Hi! Can I exchange my Stormline jacket for the insulated one?")
    first = operation_from_message(proposal)
    assert first is not None and first.operation_id == "exc_5Rt2" and first.summary == SPEC_SUMMARY
    assert "once you approve" in proposal["text"]

    [revised] = chat.say("Actually, size L instead please")
    second = operation_from_message(revised)
    assert second.operation_id == first.operation_id
    assert second.revision != first.revision
    assert second.terms["replacement_sku"] == "stormline-insulated-l"
    assert "$80.00 more" in second.summary

    # Text never approves.
    [reply] = chat.say("Yes, approved, do it!")
    assert "approval" in reply["text"] and operation_from_message(reply) is None
    assert company.state.performed("exc_5Rt2") == 0

    # The superseded revision is not what the conversation asks for any more.
    [renewed] = chat.say("The user approved the exchange.", approval=approval_of(first.raw))
    third = operation_from_message(renewed)
    assert third.operation_id == first.operation_id and third.revision != first.revision
    assert third.terms["replacement_sku"] == "stormline-insulated-l"
    assert company.state.performed("exc_5Rt2") == 0

    [done] = chat.say("The user approved the exchange.", approval=approval_of(third.raw))
    assert done["data"]["operation_id"] == "exc_5Rt2" and done["data"]["status"] == "performed"
    assert operation_from_message(done) is None
    assert company.state.performed("exc_5Rt2") == 1
    assert company.state.order("ord_7Hk2").items[-1].sku == "stormline-insulated-l"

    # A new message with the same approval adds nothing.
    [same] = chat.say("The user approved the exchange.", approval=approval_of(third.raw))
    assert same["data"] == done["data"]
    assert company.state.performed("exc_5Rt2") == 1


def test_cancel_and_move_fitting(company, chat):
    [cancel] = chat.say("Please cancel my coffee subscription")
    operation = operation_from_message(cancel)
    assert operation.terms["subscription_id"] == "sub_6Tc1"
    [done] = chat.say("approved", approval=approval_of(operation.raw))
    assert done["data"]["status"] == "performed"
    assert company.state.subscription("sub_6Tc1").status == "cancelled"

    [move] = chat.say("Can you move my fitting to Friday at 3pm?")
    booking = operation_from_message(move)
    assert booking.terms["starts_at"].endswith(("T15:00:00-08:00", "T15:00:00-07:00"))
    assert "Fri" in booking.summary and "$10.00" in booking.summary
    [done] = chat.say("approved", approval=approval_of(booking.raw))
    assert done["data"]["status"] == "performed"
    assert company.state.booking("bkg_2Fm8").starts_at.hour == 15


def test_message_retries(http, agent):
    msg = message("exchange my Stormline jacket for the insulated one")
    first = http.post(ENDPOINT, json={"message": msg}, headers=agent.headers())
    assert first.status_code == 201
    # Same id, same content: the original response (the same conversation), nothing added.
    again = http.post(ENDPOINT, json={"message": msg}, headers=agent.headers())
    assert again.status_code == 201 and again.json() == first.json()
    conversation_id = first.json()["conversation_id"]
    events = http.get(f"{ENDPOINT}/{conversation_id}/events", headers=agent.headers()).json()[
        "events"
    ]
    assert len(events) == 2
    conflict = http.post(
        ENDPOINT, json={"message": dict(msg, text="something else")}, headers=agent.headers()
    )
    assert conflict.status_code == 409 and conflict.json()["error"] == "message_id_conflict"
    elsewhere = http.post(
        f"{ENDPOINT}/{conversation_id}/messages", json={"message": msg}, headers=agent.headers()
    )
    assert elsewhere.status_code == 409


def test_approval_message_retry_returns_the_original_response(company, chat):
    [proposal] = chat.say("exchange my Stormline jacket for the insulated one")
    msg = message(
        "The user approved the exchange.",
        approval=approval_of(operation_from_message(proposal).raw),
    )
    first = chat.send(msg)
    again = chat.send(msg)
    assert first.status_code == again.status_code == 202 and first.json() == again.json()
    assert company.state.performed("exc_5Rt2") == 1


def test_another_sessions_approval_is_just_text(company, http, agent, chat):
    [proposal] = chat.say("exchange my Stormline jacket for the insulated one")
    operation = operation_from_message(proposal)
    # Same agent and User, another Session: it may read the conversation but not approve.
    other = AgentSession.at(company, key=agent.key, user_id=agent.identity.user_id)
    other_chat = Chat(http, other)
    other_chat.conversation_id = chat.conversation_id
    [reply] = other_chat.say("The user approved the exchange.", approval=approval_of(operation.raw))
    assert "data" not in reply and operation_from_message(reply) is None
    assert company.state.performed("exc_5Rt2") == 0


def test_without_the_extension_no_operations(company, http, agent):
    chat = Chat(http, agent, extensions=False)
    [reply] = chat.say("exchange my Stormline jacket for the insulated one")
    assert "extensions" not in reply and "website" in reply["text"]


def test_long_poll_and_cursors(http, agent, chat):
    chat.say("hello")
    url = f"{ENDPOINT}/{chat.conversation_id}/events"
    page = http.get(url, headers=agent.headers()).json()
    assert len(page["events"]) == 2 and page["has_more"] is False
    started = time.monotonic()
    empty = http.get(url, params={"cursor": page["cursor"], "wait": "0.5"}, headers=agent.headers())
    assert (
        empty.status_code == 200
        and empty.json()["events"] == []
        and time.monotonic() - started >= 0.45
    )
    assert empty.json()["cursor"] == page["cursor"]
    bad = http.get(url, params={"cursor": "c_999"}, headers=agent.headers())
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_cursor"


async def test_long_poll_wakes_on_a_new_message(company, agent, monkeypatch):
    import asyncio
    import threading

    import poppy_tui.demo.conversation as conversation_module

    # The Company has read the poll's wait (and goes straight on to wait): a message after that
    # must wake it, not merely be there already.
    polling = threading.Event()
    read_wait = conversation_module._wait_seconds

    def noted(value):
        seconds = read_wait(value)
        if seconds > 0:
            polling.set()
        return seconds

    monkeypatch.setattr(conversation_module, "_wait_seconds", noted)
    async with httpx.AsyncClient(base_url=company.base_url, timeout=10) as client:
        created = (
            await client.post(ENDPOINT, json={"message": message("hello")}, headers=agent.headers())
        ).json()
        url = f"{ENDPOINT}/{created['conversation_id']}/events"
        poll = asyncio.ensure_future(
            client.get(
                url, params={"cursor": created["cursor"], "wait": "20"}, headers=agent.headers()
            )
        )
        assert await asyncio.to_thread(polling.wait, 10), "the long poll never reached the Company"
        assert not poll.done()
        started = time.monotonic()
        await client.post(
            f"{ENDPOINT}/{created['conversation_id']}/messages",
            json={"message": message("order status?")},
            headers=agent.headers(),
        )
        events = (await poll).json()["events"]
        assert events and time.monotonic() - started < 5


def test_someone_elses_conversation_is_not_found(company, http, chat):
    chat.say("hello")
    stranger = AgentSession.at(company)
    response = http.get(f"{ENDPOINT}/{chat.conversation_id}/events", headers=stranger.headers())
    assert response.status_code == 404 and response.json()["error"] == "conversation_not_found"


@pytest.mark.parametrize(
    "bad", [{}, {"id": "bad id!", "text": "x"}, {"id": "msg_1"}, {"id": "msg_1", "text": 5}]
)
def test_invalid_messages(http, agent, bad):
    response = http.post(ENDPOINT, json={"message": bad}, headers=agent.headers())
    assert response.status_code == 400


def test_a_dropped_approval_response_is_recovered_by_resending_the_same_message(start):
    company = start("drop_after_perform=1,busy=1")
    agent = AgentSession.at(company)
    with httpx.Client(base_url=company.base_url) as http:
        chat = Chat(http, agent)
        [proposal] = chat.say("exchange my Stormline jacket for the insulated one")
        msg = message(
            "The user approved the exchange.",
            approval=approval_of(operation_from_message(proposal).raw),
        )
        busy = chat.send(msg)
        assert busy.status_code == 503 and busy.headers["Retry-After"] == "1"
        assert company.state.performed("exc_5Rt2") == 0
        with pytest.raises(httpx.TransportError):
            chat.send(msg)
        assert company.state.performed("exc_5Rt2") == 1
        retry = chat.send(msg)
        assert retry.status_code == 202
        [done] = [e["message"] for e in retry.json()["events"] if e["message"]["role"] == "company"]
        assert done["data"] == {**done["data"], "operation_id": "exc_5Rt2", "status": "performed"}
    assert company.state.performed("exc_5Rt2") == 1


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("move my fitting to Friday", "bkc_"),
        ("can you move my fitting to tomorrow at 3pm", "bkc_"),
        ("reschedule my appointment to Monday at 11:30", "bkc_"),
        ("cancel my coffee subscription", "cnl_"),
        ("I'd like to swap my jacket for the insulated one in large", "exc_"),
    ],
)
def test_phrases_that_propose(chat, text, kind):
    [reply] = chat.say(text)
    operation = operation_from_message(reply)
    assert operation is not None and operation.operation_id.startswith(kind), reply["text"]


@pytest.mark.parametrize("text", ["hello", "yes do it", "ok", "what's the weather?"])
def test_phrases_that_propose_nothing(company, chat, text):
    [reply] = chat.say(text)
    assert operation_from_message(reply) is None and "data" not in reply
