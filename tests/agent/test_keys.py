"""The signing key: a real keyring backend, the fail backend, and the opt-in 0600 file."""

from __future__ import annotations

import os
import stat

import keyring
import keyring.errors
import keyring.backends.chainer
import keyring.backends.fail
import keyring.backends.null
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.config import Config
from tests.keyring_support import MemoryKeyring
from poppy_tui.agent.keys import (
    KEY_STORAGE_ENV,
    KEYRING_SERVICE,
    KEYRING_USERNAME,
    KeyStorageError,
    key_to_pem,
    keyring_problem,
    load_or_create_key,
)


def test_created_once_in_the_keyring(paths, memory_keyring):
    key = load_or_create_key(paths, Config())
    assert isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1)
    stored = memory_keyring.secrets[(KEYRING_SERVICE, KEYRING_USERNAME)]
    assert stored.startswith("-----BEGIN PRIVATE KEY-----")  # PEM PKCS8
    again = load_or_create_key(paths, Config())
    assert key_to_pem(again) == stored
    assert not paths.key_file.exists()  # nothing written beside the keyring


def test_fail_backend_is_a_clear_error_not_a_fallback(paths):
    keyring.set_keyring(keyring.backends.fail.Keyring())
    with pytest.raises(KeyStorageError) as caught:
        load_or_create_key(paths, Config())
    message = str(caught.value)
    assert (
        "keyring backend" in message
        and 'key_storage = "file"' in message
        and f"{KEY_STORAGE_ENV}=file" in message
    )
    assert not paths.key_file.exists()


def test_null_backend_is_refused(paths):
    keyring.set_keyring(keyring.backends.null.Keyring())
    with pytest.raises(KeyStorageError):
        load_or_create_key(paths, Config())


def test_chainer_of_nothing_usable_is_refused():
    chainer = keyring.backends.chainer.ChainerBackend()
    usable_inner = [b for b in chainer.backends if keyring_problem(b) is None]
    assert (keyring_problem(chainer) is None) == bool(usable_inner)


class LockedKeyring(MemoryKeyring):
    """A backend that exists but refuses, as a locked Secret Service collection does."""

    def get_password(self, service, username):
        raise keyring.errors.KeyringLocked("the collection is locked")


def test_a_refusing_backend_is_reported(paths):
    keyring.set_keyring(LockedKeyring())
    with pytest.raises(KeyStorageError, match="locked"):
        load_or_create_key(paths, Config())


def test_unreadable_keyring_value_is_not_overwritten(paths, memory_keyring):
    memory_keyring.secrets[(KEYRING_SERVICE, KEYRING_USERNAME)] = "not a key"
    with pytest.raises(KeyStorageError, match="left untouched"):
        load_or_create_key(paths, Config())
    assert memory_keyring.secrets[(KEYRING_SERVICE, KEYRING_USERNAME)] == "not a key"


def test_file_fallback_by_config(paths, memory_keyring):
    keyring.set_keyring(keyring.backends.fail.Keyring())  # the file needs no keyring at all
    key = load_or_create_key(paths, Config(key_storage="file"))
    info = paths.key_file.stat()
    assert stat.S_IMODE(info.st_mode) == 0o600
    assert stat.S_IMODE(paths.key_file.parent.stat().st_mode) == 0o700
    assert key_to_pem(load_or_create_key(paths, Config(key_storage="file"))) == key_to_pem(key)
    assert not [p for p in paths.key_file.parent.iterdir() if p.name.endswith(".tmp")]


def test_file_fallback_by_environment(paths, monkeypatch):
    keyring.set_keyring(keyring.backends.fail.Keyring())
    monkeypatch.setenv(KEY_STORAGE_ENV, "file")
    load_or_create_key(paths, Config(key_storage="keyring"))
    assert paths.key_file.exists()


def test_unknown_environment_value(paths, monkeypatch):
    monkeypatch.setenv(KEY_STORAGE_ENV, "plaintext")
    with pytest.raises(KeyStorageError, match="not understood"):
        load_or_create_key(paths, Config())


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644])
def test_file_readable_by_others_is_refused(paths, mode):
    load_or_create_key(paths, Config(key_storage="file"))
    os.chmod(paths.key_file, mode)
    with pytest.raises(KeyStorageError, match="chmod 600"):
        load_or_create_key(paths, Config(key_storage="file"))


def test_symlinked_key_file_is_refused(paths, tmp_path):
    load_or_create_key(paths, Config(key_storage="file"))
    real = tmp_path / "elsewhere.pem"
    paths.key_file.rename(real)
    paths.key_file.symlink_to(real)
    with pytest.raises(KeyStorageError):
        load_or_create_key(paths, Config(key_storage="file"))


def test_group_readable_directory_is_tightened(paths):
    paths.data_dir.mkdir(parents=True)
    os.chmod(paths.data_dir, 0o755)
    load_or_create_key(paths, Config(key_storage="file"))
    assert stat.S_IMODE(paths.data_dir.stat().st_mode) == 0o700


async def test_agent_without_a_keyring_fails_clearly_and_sends_nothing(make_agent, shop):
    keyring.set_keyring(keyring.backends.fail.Keyring())
    agent = make_agent()
    company = await agent.add_company(shop.base_url)  # discovery needs no Session
    with pytest.raises(KeyStorageError):
        await agent.call_api(company, "GET", "/api/orders")
    assert shop.requests(lambda r: r.path == "/api/orders") == []
    assert not agent.paths.key_file.exists()
