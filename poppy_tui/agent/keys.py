"""The agent's long-term ES256 (P-256) signing key: in the system keyring, or an opt-in 0600 file.

Every Session JWT is signed with this key, and a Company binds each Session to the key's
thumbprint, so losing or silently replacing it ends every Session. That is why nothing here
falls back on its own: without a usable keyring the user must choose the file explicitly.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths

KEYRING_SERVICE = "poppy-tui"
KEYRING_USERNAME = "agent-signing-key"
KEY_STORAGE_ENV = "POPPY_TUI_KEY_STORAGE"
STORAGE_CHOICES = ("keyring", "file")

# Backends that accept calls but keep nothing (null), refuse every call (fail), or are
# plaintext files chosen only because keyrings.alt happened to be installed.
_UNUSABLE_BACKEND_MARKERS = ("fail", "null", "plaintext")


class KeyStorageError(RuntimeError):
    """The signing key can't be kept or read safely. The message says what the user can do."""


_HOW_TO_FIX = (
    "Install a keyring backend (for example gnome-keyring or KWallet with a running D-Bus "
    'session, or the macOS Keychain), or opt in to a private key file: set key_storage = "file" '
    f"in config.toml, or {KEY_STORAGE_ENV}=file in the environment."
)


def storage_mode(config: Config) -> str:
    """The environment wins over config.toml so a headless run can opt in without editing files."""
    env = os.environ.get(KEY_STORAGE_ENV)
    if env is not None and env.strip():
        mode = env.strip().lower()
        if mode not in STORAGE_CHOICES:
            raise KeyStorageError(
                f"{KEY_STORAGE_ENV}={env!r} is not understood; use one of {', '.join(STORAGE_CHOICES)}."
            )
        return mode
    return config.key_storage


def _backend_names(backend: object) -> list[str]:
    names = [f"{type(backend).__module__}.{type(backend).__name__}".lower()]
    for inner in getattr(backend, "backends", None) or []:
        names.extend(_backend_names(inner))
    return names


def keyring_problem(backend: object | None = None) -> str | None:
    """Why the active keyring can't hold the key, or None when it can (Poetry's availability test)."""
    if backend is None:
        import keyring  # here, as below: with the key in a file, a command never loads keyring

        backend = keyring.get_keyring()
    names = _backend_names(backend)
    own = names[0]
    inner = names[1:]
    if "chainer" in own:
        usable = [n for n in inner if not any(m in n for m in _UNUSABLE_BACKEND_MARKERS)]
        if not usable:
            return f"the keyring backend {own} chains no usable backend"
        return None
    if any(marker in own for marker in _UNUSABLE_BACKEND_MARKERS):
        return f"the keyring backend {own} does not store secrets safely"
    return None


def generate_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def key_to_pem(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode("ascii")


def key_from_pem(text: str | bytes, where: str) -> ec.EllipticCurvePrivateKey:
    data = text.encode("ascii", "replace") if isinstance(text, str) else text
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise KeyStorageError(
            f"the signing key in {where} can't be read ({exc}). It was left untouched; "
            "restore it, or remove it to create a new key (every Session then starts over)."
        ) from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
        raise KeyStorageError(
            f"the signing key in {where} is not a P-256 key; poppy-tui signs with ES256."
        )
    return key


def load_or_create_key(paths: Paths, config: Config) -> ec.EllipticCurvePrivateKey:
    mode = storage_mode(config)
    if mode == "file":
        return _load_or_create_file_key(paths.key_file)
    return _load_or_create_keyring_key()


# ---- keyring ------------------------------------------------------------------------------


def _load_or_create_keyring_key() -> ec.EllipticCurvePrivateKey:
    # keyring finds its backends through package metadata: most of a command's start-up when
    # imported at the top, and not needed at all when the key is kept in a file.
    import keyring
    import keyring.errors

    backend = keyring.get_keyring()
    problem = keyring_problem(backend)
    if problem:
        raise KeyStorageError(
            f"No usable keyring for the agent's signing key: {problem}. {_HOW_TO_FIX}"
        )
    where = f"the keyring ({KEYRING_SERVICE} / {KEYRING_USERNAME})"
    try:
        stored = backend.get_password(KEYRING_SERVICE, KEYRING_USERNAME)
        if stored is not None:
            return key_from_pem(stored, where)
        backend.set_password(KEYRING_SERVICE, KEYRING_USERNAME, key_to_pem(generate_key()))
        # Read back rather than trusting our copy: another process may have created one at
        # the same moment, and whichever the keyring kept is the key every process must use.
        stored = backend.get_password(KEYRING_SERVICE, KEYRING_USERNAME)
    except keyring.errors.NoKeyringError as exc:
        raise KeyStorageError(
            f"No usable keyring for the agent's signing key ({exc}). {_HOW_TO_FIX}"
        ) from None
    except keyring.errors.KeyringError as exc:
        raise KeyStorageError(
            f"The keyring refused the agent's signing key ({exc}). {_HOW_TO_FIX}"
        ) from None
    if stored is None:
        raise KeyStorageError(
            f"The keyring accepted the signing key but does not return it. {_HOW_TO_FIX}"
        )
    return key_from_pem(stored, where)


# ---- file fallback (opt-in) ------------------------------------------------------------------


def _private_dir(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = folder.stat()
    if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(folder, 0o700)


def _check_private_file(fd: int, path: Path) -> None:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise KeyStorageError(
            f"{path} is not a regular file; refusing to use it as the signing key."
        )
    if info.st_uid != os.getuid():
        raise KeyStorageError(
            f"{path} belongs to another user; refusing to use it as the signing key."
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise KeyStorageError(
            f"{path} can be read by other users (mode {mode:04o}); refusing to use it. "
            f"If nobody else could have read it, run: chmod 600 {path}"
        )


def _read_file_key(path: Path) -> ec.EllipticCurvePrivateKey:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise KeyStorageError(f"can't open the signing key {path}: {exc.strerror or exc}") from None
    try:
        _check_private_file(fd, path)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(64 * 1024)
    finally:
        os.close(fd)
    return key_from_pem(data, str(path))


def _load_or_create_file_key(path: Path) -> ec.EllipticCurvePrivateKey:
    try:
        _private_dir(path.parent)
    except OSError as exc:
        raise KeyStorageError(f"can't create {path.parent}: {exc.strerror or exc}") from None
    if path.exists() or path.is_symlink():
        return _read_file_key(path)
    # Write a private temporary file, then link it into place: the key appears complete or
    # not at all, and if another process won the race we use its key instead of ours.
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(
            temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
    except OSError as exc:
        raise KeyStorageError(
            f"can't create the signing key {path}: {exc.strerror or exc}"
        ) from None
    try:
        try:
            os.write(fd, key_to_pem(generate_key()).encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temp, path)
        except FileExistsError:
            pass
        except OSError as exc:
            raise KeyStorageError(
                f"can't create the signing key {path}: {exc.strerror or exc}"
            ) from None
    finally:
        try:
            os.unlink(temp)
        except OSError:
            pass
    return _read_file_key(path)
