"""Which failures are expected (the user's or a Company's) and get one line instead of a traceback."""

from __future__ import annotations

import sys

from poppy_tui.cli.exit_codes import Exit


class CliError(Exception):
    """An expected failure: its message is printed as one line, then we exit with `code`."""

    def __init__(self, message: str, code: int = Exit.ERROR) -> None:
        super().__init__(message)
        self.code = code


def expected_errors() -> tuple[type[BaseException], ...]:
    """Failures that are the user's or the Company's, not poppy-tui bugs: no traceback for these.

    Modules a command may not have loaded are looked up, not imported: if nothing loaded
    them, nothing of theirs can have been raised.
    """
    from poppy_tui.agent.config import ConfigError
    from poppy_tui.agent.store import StateError, StoreError
    from poppy_tui.protocol.errors import ProtocolError

    found: list[type[BaseException]] = [ConfigError, StoreError, StateError, ProtocolError, OSError]
    for module_name, attribute in (
        ("poppy_tui.agent.keys", "KeyStorageError"),
        ("poppy_tui.protocol.client_metadata", "IdentityError"),
        ("poppy_tui.agent.agent", "AgentError"),
        ("poppy_tui.agent.companies", "DiscoveryError"),
        ("poppy_tui.agent.net.http", "ResponseTooLarge"),
        ("httpx2", "HTTPError"),
    ):
        module = sys.modules.get(module_name)
        error = getattr(module, attribute, None) if module else None
        if isinstance(error, type) and issubclass(error, BaseException):
            found.append(error)
    return tuple(found)
