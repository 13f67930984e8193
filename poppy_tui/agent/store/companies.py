"""Companies (from their poppy.json) and their Sessions."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from poppy_tui.agent.store.connection import StateError, StoreBase, parse_stamp, stamp
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.records import CompanyRecord
from poppy_tui.agent.store.rows import _COMPANY_COLUMNS, _company, _dumps
from poppy_tui.protocol.ids import new_id

if (
    TYPE_CHECKING
):  # an annotation only: discovery (email, http_sfv) stays out of `pending`'s imports
    from poppy_tui.protocol.discovery import CompanyDocument


class CompanyStore(StoreBase):
    """Companies and Sessions."""

    def upsert_company(
        self,
        base_url: str,
        document: CompanyDocument,
        cache: tuple[str | None, datetime] | None = None,
    ) -> CompanyRecord:
        """Keep a Company's poppy.json; `cache` is (ETag, fresh until) from the answer that
        carried it. Adding a removed Company again brings it back, with its old identity."""
        at = stamp()
        with self._write(Durability.SOON) as db:
            row = db.execute("SELECT id FROM companies WHERE base_url = ?", (base_url,)).fetchone()
            doc_json = _dumps(document.raw)
            if row is None:
                db.execute(
                    "INSERT INTO companies (base_url, domain, name, document_json, supports_operations,"
                    " user_id, session_id, discovered_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        base_url,
                        document.domain,
                        document.name,
                        doc_json,
                        int(document.supports_operations),
                        new_id("usr_"),
                        new_id("ses_"),
                        at,
                        at,
                    ),
                )
            else:
                db.execute(
                    "UPDATE companies SET domain=?, name=?, document_json=?, supports_operations=?,"
                    " updated_at=?, removed_at=NULL WHERE id=?",
                    (
                        document.domain,
                        document.name,
                        doc_json,
                        int(document.supports_operations),
                        at,
                        row[0],
                    ),
                )
            if cache is not None:
                company_id = db.execute(
                    "SELECT id FROM companies WHERE base_url = ?", (base_url,)
                ).fetchone()[0]
                self._keep_document_cache(db, company_id, cache[0], cache[1], at)
        company = self.find_company(base_url)
        assert company is not None
        return company

    @staticmethod
    def _keep_document_cache(
        db: Any, company_id: int, etag: str | None, fresh_until: datetime, at: str
    ) -> None:
        db.execute(
            "INSERT INTO company_documents (company_id, etag, fetched_at, fresh_until) VALUES (?,?,?,?)"
            " ON CONFLICT (company_id) DO UPDATE SET etag=excluded.etag, fetched_at=excluded.fetched_at,"
            " fresh_until=excluded.fresh_until",
            (company_id, etag, at, stamp(fresh_until)),
        )

    def document_cache(self, company_id: int) -> tuple[str | None, datetime] | None:
        """(ETag, fresh until) of the Company's stored poppy.json, or None if never recorded."""
        row = self._db.execute(
            "SELECT etag, fresh_until FROM company_documents WHERE company_id=?", (company_id,)
        ).fetchone()
        return None if row is None else (row[0], parse_stamp(row[1]))

    def keep_document_fresh(self, company_id: int, etag: str | None, fresh_until: datetime) -> None:
        """The Company said its poppy.json is unchanged (304): it stays fresh until `fresh_until`."""
        with self._write(Durability.SOON) as db:
            self._keep_document_cache(db, company_id, etag, fresh_until, stamp())

    def unsettled_operations(self, company_id: int) -> int:
        """Operations with this Company that still wait for a person or for an outcome."""
        counted: int = self._db.execute(
            "SELECT count(*) FROM operations WHERE company_id=? AND status IN (?,?,?,?,?)",
            (company_id, "pending", "withdrawn", "approved", "sending", "outcome_unknown"),
        ).fetchone()[0]
        return counted

    def remove_company(self, company_id: int) -> CompanyRecord:
        """Forget a Company for lists and look-ups. Its records (requests, operations, decisions)
        stay, so history still names it; adding it again brings it back."""
        unsettled = self.unsettled_operations(company_id)
        if unsettled:
            raise StateError(
                f"{unsettled} operation(s) with this Company still wait for a decision or an outcome; "
                "settle them first (poppy-tui pending)"
            )
        with self._write(Durability.SOON) as db:
            db.execute("UPDATE companies SET removed_at=? WHERE id=?", (stamp(), company_id))
        return self.get_company(company_id)

    def new_session(self, company_id: int) -> CompanyRecord:
        """Start a new Session with a Company (after invalid_session)."""
        with self._write(Durability.SOON) as db:
            db.execute(
                "UPDATE companies SET session_id=?, updated_at=? WHERE id=?",
                (new_id("ses_"), stamp(), company_id),
            )
        return self.get_company(company_id)

    def get_company(self, company_id: int) -> CompanyRecord:
        row = self._db.execute(
            f"SELECT {_COMPANY_COLUMNS} FROM companies WHERE id=?", (company_id,)
        ).fetchone()
        if row is None:
            raise KeyError(company_id)
        return _company(row)

    def find_company(self, key: str) -> CompanyRecord | None:
        """By base URL, domain or name (case-insensitive), in that order; then by the start of a
        name ("manzanita"), but only when exactly one Company's name starts that way."""
        matches = self.match_companies(key)
        return matches[0] if len(matches) == 1 else None

    def match_companies(self, key: str) -> list[CompanyRecord]:
        """Every Company `key` could mean, by the first rule that matches any: base URL, domain,
        name (case-insensitive), then the start of a name. More than one is ambiguous."""
        for column in ("base_url", "domain", "name"):
            rows = self._db.execute(
                f"SELECT {_COMPANY_COLUMNS} FROM companies WHERE lower({column}) = lower(?)"
                " AND removed_at IS NULL ORDER BY id",
                (key.rstrip("/") if column == "base_url" else key,),
            ).fetchall()
            if rows:
                return [_company(r) for r in rows]
        if not key.strip():
            return []
        prefix = key.strip().lower()
        return [c for c in self.list_companies() if c.name.lower().startswith(prefix)]

    def list_companies(self) -> list[CompanyRecord]:
        rows = self._db.execute(
            f"SELECT {_COMPANY_COLUMNS} FROM companies WHERE removed_at IS NULL ORDER BY name, id"
        ).fetchall()
        return [_company(r) for r in rows]
