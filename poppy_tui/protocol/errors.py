"""Typed errors for bad input. Each names the field at fault so a user can see what is wrong."""

from __future__ import annotations


class ProtocolError(ValueError):
    """Input from a Company (or a user) that does not follow the protocol."""

    code = "protocol_error"

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}" if field else reason)


class InvalidOperation(ProtocolError):
    code = "invalid_operation"


class InvalidApproval(ProtocolError):
    code = "invalid_approval"


class InvalidDiscovery(ProtocolError):
    code = "invalid_discovery"


class InvalidExtensions(ProtocolError):
    code = "invalid_extensions"


class InvalidMessage(ProtocolError):
    code = "invalid_message"


class ProtocolViolation(ProtocolError):
    """The Company broke a MUST of the extension (e.g. answered an approval with its own revision)."""

    code = "protocol_violation"
