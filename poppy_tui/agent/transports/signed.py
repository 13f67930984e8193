"""One request to a Company in a Session, signed in when the agent is, and what its answer says
about that Session: the loop the API and the conversation transports share (spec 5 and 5.4).

Each try carries the access token held now (a renewal while the request was out is seen by the
next one) beside the Session JWT. An `invalid_session` answer starts a new Session and tries once
more where sessions.on_invalid_session allows it (never for an approval bound to its Session,
Ops 3); a sign-in challenge ends it with the challenge; anything else is the transport's to read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from poppy_tui.agent.net import http
from poppy_tui.agent.sessions import Sessions, is_invalid_session
from poppy_tui.agent.store import CompanyRecord
from poppy_tui.agent.transports import Exchange, carried
from poppy_tui.protocol.challenges import parse_challenge
from poppy_tui.protocol.outcomes import NotPerformed, NotSent, Outcome, Unknown

# Sends the request with these headers: the answer, or why there is none.
Send = Callable[[dict[str, str]], Awaitable[http.HttpAnswer | NotSent | Unknown]]
Classify = Callable[[CompanyRecord, http.HttpAnswer], Outcome]


async def signed_exchange(
    sessions: Sessions,
    company: CompanyRecord,
    session_id: str,
    send: Send,
    classify: Classify,
    *,
    json_body: bool,
    carries_approval: bool,
    account_owned: bool = False,
    headers: dict[str, str] | None = None,
    new_session_detail: str = "",
) -> Exchange:
    """`headers`: the transport's own, after the Session's, Accept and Content-Type (when
    `json_body`). `new_session_detail`: the Exchange's detail when it went in a new Session."""
    retried = False
    while True:
        token = await sessions.access_token(company)
        account = sessions.signed_in_account(company) if token is not None else None
        sent = await sessions.signed_in_headers(company, session_id, token)
        sent["Accept"] = "application/json"
        if json_body:
            sent["Content-Type"] = "application/json"
        sent.update(headers or {})
        answer = await send(sent)
        if isinstance(answer, (NotSent, Unknown)):
            return Exchange(answer, None, {"error": answer.detail}, session_id, answer.detail)
        if is_invalid_session(answer.status, answer.body):
            verdict = sessions.on_invalid_session(
                company, session_id, carries_approval, retried, account_owned
            )
            if verdict.retry:
                company, session_id, retried = verdict.company, verdict.company.session_id, True
                continue
            return Exchange(
                NotPerformed(answer.status, "invalid_session", answer.body),
                answer.status,
                answer.for_record(),
                session_id,
                verdict.detail,
                True,
                token_fingerprint=carried(token),
                account=account,
            )
        challenge = parse_challenge(answer.status, answer.headers, answer.body)
        if challenge is not None:
            return Exchange(
                NotPerformed(answer.status, challenge.error, answer.body),
                answer.status,
                answer.for_record(),
                session_id,
                sessions.challenge_detail(company, challenge),
                challenge=challenge,
                token_fingerprint=carried(token),
                account=account,
            )
        return Exchange(
            classify(company, answer),
            answer.status,
            answer.for_record(),
            session_id,
            new_session_detail if retried else "",
            token_fingerprint=carried(token),
            account=account,
        )
