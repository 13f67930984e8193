"""Sessions with Companies: identity, the headers on every request, and what invalid_session means.

Every choice about Sessions is made here and nowhere else:
- one pairwise User ID and one current Session per Company (kept in the store's companies table);
- a fresh Session JWT for every HTTP request, addressed to CompanyDocument.audience;
- `Poppy-Extensions` only when the Company's poppy.json lists operations v2;
- after 403 invalid_session, a request without an approval starts a new Session and is tried
  once more; a request carrying an approval is never moved to another Session, because an
  operation returned signed out can be approved only in its own Session (spec 3).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.store import CompanyRecord, Store
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.errors import ProtocolError
from poppy_tui.protocol.extensions import OPERATIONS_HEADER_VALUE
from poppy_tui.protocol.session_jwt import SessionIdentity, sign_session_jwt

INVALID_SESSION = "invalid_session"


def is_invalid_session(status: int | None, body: Any) -> bool:
    return status in (401, 403) and isinstance(body, dict) and body.get("error") == INVALID_SESSION


@dataclass(frozen=True)
class SessionVerdict:
    """What to do after a Company said the Session is invalid."""

    retry: bool  # send again in the (new) Session
    company: CompanyRecord  # the Company record after any renewal
    detail: str


class Sessions:
    def __init__(
        self,
        store: Store,
        key_loader: Callable[[], ec.EllipticCurvePrivateKey],
        client_id: str = c.AGENT_CLIENT_ID,
        allow_loopback: bool = False,
    ) -> None:
        self._store = store
        self._key_loader = key_loader
        self._key: ec.EllipticCurvePrivateKey | None = None
        self._client_id = client_id
        self._allow_loopback = allow_loopback
        self._audiences: dict[tuple[int, str], str] = {}
        self._lock = threading.Lock()

    @property
    def key(self) -> ec.EllipticCurvePrivateKey:
        # Loaded on first use, so opening the agent to browse history never touches the keyring.
        with self._lock:
            if self._key is None:
                self._key = self._key_loader()
            return self._key

    def audience(self, company: CompanyRecord) -> str:
        cache_key = (company.id, company.updated_at)
        audience = self._audiences.get(cache_key)
        if audience is None:
            try:
                document = parse_poppy_json(company.document, company.domain, self._allow_loopback)
                audience = document.audience
            except ProtocolError:
                # The stored document was validated when it was discovered; if a newer
                # poppy-tui reads it differently, address the Company by its domain.
                audience = f"https://{company.domain}"
            self._audiences[cache_key] = audience
        return audience

    def identity(self, company: CompanyRecord, session_id: str | None = None) -> SessionIdentity:
        return SessionIdentity(
            client_id=self._client_id, user_id=company.user_id, session_id=session_id or company.session_id
        )

    def session_jwt(self, company: CompanyRecord, session_id: str | None = None) -> str:
        return sign_session_jwt(self.key, self.identity(company, session_id), self.audience(company))

    def headers(self, company: CompanyRecord, session_id: str | None = None) -> dict[str, str]:
        """Fresh for every HTTP request: a Session JWT is never reused (its jti is single-use)."""
        headers = {
            c.HEADER_SESSION: self.session_jwt(company, session_id),
            c.HEADER_VERSION: c.POPPY_VERSION,
        }
        if self.declares_operations(company):
            headers[c.HEADER_EXTENSIONS] = OPERATIONS_HEADER_VALUE
        return headers

    @staticmethod
    def declares_operations(company: CompanyRecord) -> bool:
        return company.supports_operations

    def current(self, company: CompanyRecord) -> CompanyRecord:
        """The Company as stored now: another process may have started a new Session."""
        return self._store.get_company(company.id)

    def on_invalid_session(
        self, company: CompanyRecord, session_id_used: str, carries_approval: bool, already_retried: bool
    ) -> SessionVerdict:
        latest = self.current(company)
        if latest.session_id == session_id_used:
            latest = self._store.new_session(company.id)
        if carries_approval:
            return SessionVerdict(
                False,
                latest,
                "the Company ended the Session this operation was returned in (invalid_session); an "
                "operation can be approved only in its own Session, so the approval was not moved to a "
                "new one. Ask the Company again to get a new operation.",
            )
        if already_retried:
            return SessionVerdict(False, latest, "the Company rejected a new Session too (invalid_session)")
        return SessionVerdict(True, latest, "the Session had ended; started a new one and tried again")
