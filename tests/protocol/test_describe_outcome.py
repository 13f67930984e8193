"""One line for what an outcome says of itself (protocol/outcomes.py describe), used by the
dispatcher, the outcome probe and the conversation transport alike."""

from __future__ import annotations

from poppy_tui.protocol.errors import ProtocolError
from poppy_tui.protocol.outcomes import BadResponse, NotSent, Performed, Unknown, describe


def test_the_detail_first_then_the_error_then_the_kind():
    assert (
        describe(Unknown("connection dropped after sending")) == "connection dropped after sending"
    )
    assert describe(NotSent("could not connect")) == "could not connect"
    bad = BadResponse(ProtocolError("response", "not JSON"), 200)
    assert describe(bad) == str(bad.error)
    assert describe(Performed(200, {"ok": True})) == "Performed"  # nothing to say but its kind


def test_an_empty_detail_is_no_detail():
    assert describe(Unknown("")) == "Unknown"
