"""Companies (from their poppy.json) and their Sessions."""

from __future__ import annotations

from poppy_tui.agent.store.connection import StoreBase, stamp
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.records import CompanyRecord
from poppy_tui.agent.store.rows import _COMPANY_COLUMNS, _company, _dumps
from poppy_tui.protocol.discovery import CompanyDocument
from poppy_tui.protocol.ids import new_id


class CompanyStore(StoreBase):
    """Companies and Sessions."""

    def upsert_company(self, base_url: str, document: CompanyDocument) -> CompanyRecord:
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
                    " updated_at=? WHERE id=?",
                    (document.domain, document.name, doc_json, int(document.supports_operations), at, row[0]),
                )
        company = self.find_company(base_url)
        assert company is not None
        return company

    def new_session(self, company_id: int) -> CompanyRecord:
        """Start a new Session with a Company (after invalid_session)."""
        with self._write(Durability.SOON) as db:
            db.execute(
                "UPDATE companies SET session_id=?, updated_at=? WHERE id=?",
                (new_id("ses_"), stamp(), company_id),
            )
        return self.get_company(company_id)

    def get_company(self, company_id: int) -> CompanyRecord:
        row = self._db.execute(f"SELECT {_COMPANY_COLUMNS} FROM companies WHERE id=?", (company_id,)).fetchone()
        if row is None:
            raise KeyError(company_id)
        return _company(row)

    def find_company(self, key: str) -> CompanyRecord | None:
        """By base URL, domain or name (case-insensitive), in that order; then by the start of a
        name ("manzanita"), but only when exactly one Company's name starts that way."""
        for column in ("base_url", "domain", "name"):
            row = self._db.execute(
                f"SELECT {_COMPANY_COLUMNS} FROM companies WHERE lower({column}) = lower(?) ORDER BY id LIMIT 1",
                (key.rstrip("/") if column == "base_url" else key,),
            ).fetchone()
            if row is not None:
                return _company(row)
        if not key.strip():
            return None
        prefix = key.strip().lower()
        matches = [c for c in self.list_companies() if c.name.lower().startswith(prefix)]
        return matches[0] if len(matches) == 1 else None

    def list_companies(self) -> list[CompanyRecord]:
        rows = self._db.execute(f"SELECT {_COMPANY_COLUMNS} FROM companies ORDER BY name, id").fetchall()
        return [_company(r) for r in rows]
