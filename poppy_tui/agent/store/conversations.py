"""Conversations and their messages, and which conversation a request went to."""

from __future__ import annotations

import json
from typing import Any

from poppy_tui.agent.store.connection import StateError, StoreBase, stamp
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.rows import _dumps
from poppy_tui.protocol.ids import new_id


class ConversationStore(StoreBase):
    """Conversations and messages."""

    def upsert_conversation(
        self, company_id: int, endpoint: str, conversation_id: str, cursor: str | None = None
    ) -> int:
        at = stamp()
        with self._write(Durability.SOON) as db:
            db.execute(
                "INSERT INTO conversations (company_id, endpoint, conversation_id, cursor, created_at, updated_at)"
                " VALUES (?,?,?,?,?,?) ON CONFLICT (company_id, conversation_id)"
                " DO UPDATE SET cursor=coalesce(excluded.cursor, cursor), updated_at=excluded.updated_at",
                (company_id, endpoint, conversation_id, cursor, at, at),
            )
            row: int = db.execute(
                "SELECT id FROM conversations WHERE company_id=? AND conversation_id=?",
                (company_id, conversation_id),
            ).fetchone()[0]
            return row

    def latest_conversation(self, company_id: int) -> tuple[int, str, str, str | None] | None:
        """(row, endpoint, conversation_id, cursor) of the newest conversation with a Company."""
        row = self._db.execute(
            "SELECT id, endpoint, conversation_id, cursor FROM conversations WHERE company_id=?"
            " ORDER BY updated_at DESC, id DESC LIMIT 1",
            (company_id,),
        ).fetchone()
        return None if row is None else tuple(row)

    def add_message(self, conversation_row: int, message: dict[str, Any], role: str) -> bool:
        """Keep a message once (by its ID); returns False if it was already kept."""
        message_id = str(message.get("id") or new_id("msg_"))
        text = message.get("text") if isinstance(message.get("text"), str) else None
        with self._write(Durability.SOON) as db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO messages (conversation_row, message_id, role, text, message_json, created_at)"
                " VALUES (?,?,?,?,?,?)",
                (conversation_row, message_id, role, text, _dumps(message), stamp()),
            )
            return cursor.rowcount == 1

    def get_conversation(self, conversation_row: int) -> tuple[int, int, str, str, str | None]:
        """(row, company_id, endpoint, conversation_id, cursor)."""
        row = self._db.execute(
            "SELECT id, company_id, endpoint, conversation_id, cursor FROM conversations WHERE id=?",
            (conversation_row,),
        ).fetchone()
        if row is None:
            raise KeyError(conversation_row)
        return tuple(row)

    def find_conversation(self, company_id: int, conversation_id: str) -> int | None:
        row = self._db.execute(
            "SELECT id FROM conversations WHERE company_id=? AND conversation_id=?",
            (company_id, conversation_id),
        ).fetchone()
        return None if row is None else int(row[0])

    def set_cursor(self, conversation_row: int, cursor: str | None) -> None:
        """Move the read position; None resets it (after cursor_expired)."""
        with self._write(Durability.SOON) as db:
            db.execute(
                "UPDATE conversations SET cursor=?, updated_at=? WHERE id=?",
                (cursor, stamp(), conversation_row),
            )

    def message_position(self, conversation_row: int, message_id: str) -> int | None:
        """Where a kept message sits in the conversation (its row id); later messages sort after it."""
        row = self._db.execute(
            "SELECT id FROM messages WHERE conversation_row=? AND message_id=?",
            (conversation_row, message_id),
        ).fetchone()
        return None if row is None else int(row[0])

    def messages_after(
        self, conversation_row: int, position: int, role: str | None = None
    ) -> list[tuple[str, str, str | None, dict[str, Any]]]:
        """(message_id, role, text, message) kept after `position`, in the order received."""
        rows = self._db.execute(
            "SELECT message_id, role, text, message_json FROM messages WHERE conversation_row=? AND id>?"
            + (" AND role=?" if role else "")
            + " ORDER BY id",
            (conversation_row, position, *([role] if role else [])),
        ).fetchall()
        return [(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    def set_request_conversation(self, request_id: int, conversation_id: str) -> None:
        """Fill in the conversation a first message created, once the Company has named it."""
        with self._write(Durability.SOON) as db:
            row = db.execute(
                "SELECT request_json FROM requests WHERE id=?", (request_id,)
            ).fetchone()
            if row is None:
                raise KeyError(request_id)
            data = json.loads(row[0])
            if data.get("interface") != "conversation" or data.get("conversation_id") not in (
                None,
                conversation_id,
            ):
                raise StateError("this request already belongs to another conversation")
            data["conversation_id"] = conversation_id
            db.execute(
                "UPDATE requests SET request_json=? WHERE id=?",
                (json.dumps(data, ensure_ascii=False, sort_keys=True), request_id),
            )

    def last_conversation_request(self, company_id: int, conversation_id: str) -> int | None:
        """The newest message we sent in a conversation: what a Company message there answers."""
        row = self._db.execute(
            "SELECT id FROM requests WHERE company_id=? AND interface='conversation'"
            " AND json_extract(request_json, '$.conversation_id') = ? ORDER BY id DESC LIMIT 1",
            (company_id, conversation_id),
        ).fetchone()
        return None if row is None else int(row[0])

    def messages(self, conversation_row: int) -> list[tuple[str, str, str | None, dict[str, Any]]]:
        """(message_id, role, text, message) in the order received."""
        rows = self._db.execute(
            "SELECT message_id, role, text, message_json FROM messages WHERE conversation_row=? ORDER BY id",
            (conversation_row,),
        ).fetchall()
        return [(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    def open_sign_in_asks(
        self,
        conversation_row: int | None = None,
    ) -> list[tuple[int, int, dict[str, Any], str | None, str]]:
        """(conversation_row, company_id, event, text, kept_at) for each conversation (or this one) whose
        newest `authorization` event (kept with role "authorization") came after the person's
        newest message there: the sign-in the Company still waits for, and what the person said
        that it answered. Whether the sign-in since covers it is the caller's to check."""
        rows = self._db.execute(
            "SELECT a.conversation_row, c.company_id, a.message_json, a.created_at,"
            " (SELECT u.text FROM messages u WHERE u.conversation_row=a.conversation_row AND u.role='user'"
            "  AND u.id<a.id ORDER BY u.id DESC LIMIT 1)"
            " FROM messages a JOIN conversations c ON c.id=a.conversation_row"
            " WHERE a.role='authorization'"
            + (" AND a.conversation_row=?" if conversation_row is not None else "")
            + " AND a.id=(SELECT max(b.id) FROM messages b WHERE b.conversation_row=a.conversation_row"
            "  AND b.role='authorization')"
            " AND NOT EXISTS (SELECT 1 FROM messages later WHERE later.conversation_row=a.conversation_row"
            "  AND later.role='user' AND later.id>a.id)"
            " ORDER BY a.id",
            (() if conversation_row is None else (conversation_row,)),
        ).fetchall()
        return [(r[0], r[1], json.loads(r[2]), r[4], r[3]) for r in rows]
