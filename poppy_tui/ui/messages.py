"""Messages the app posts to its screens."""

from __future__ import annotations

from textual.message import Message


class StoreChanged(Message):
    """Some connection (this process or another) committed to the store since the last poll."""
