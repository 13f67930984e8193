"""The in-process keyring backend shared by every test folder that needs one: a real
KeyringBackend (no mock), and an autouse-able fixture that installs it for one test."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import keyring.backend
import pytest

from poppy_tui.agent.keys import KEY_STORAGE_ENV


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring backend that keeps secrets in this process: the real KeyringBackend API."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.secrets: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.secrets.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.secrets[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.secrets.pop((service, username), None)


@pytest.fixture(autouse=True)
def memory_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryKeyring]:
    """Every test in a folder whose conftest imports this gets a fresh in-memory keyring
    (and the key-storage override cleared), restored afterwards."""
    monkeypatch.delenv(KEY_STORAGE_ENV, raising=False)
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)
