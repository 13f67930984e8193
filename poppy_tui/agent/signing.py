"""Who the agent is and whether it can sign (spec 4.1): the part of the `Agent` facade that loads
the identity and its key on first use, and says why approvals can't be signed here. A mixin of
the facade (agent.py), which holds `_identity` (None until loaded) and `_key` (a test's key)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric import ec

    from poppy_tui.agent.config import Config
    from poppy_tui.agent.identity import AgentIdentity
    from poppy_tui.agent.paths import Paths
    from poppy_tui.agent.signin.identity import ClientIdentity


class Signing:
    paths: Paths
    config: Config
    _identity: AgentIdentity | None
    _key: ec.EllipticCurvePrivateKey | None

    def _key_loader(self) -> ec.EllipticCurvePrivateKey:
        if self._key is not None:
            return self._key
        from poppy_tui.agent.keys import load_or_create_key

        return load_or_create_key(self.paths, self.config)

    def signing_key(self) -> ec.EllipticCurvePrivateKey:
        """Load (or create) the signing key now, so a missing keyring is reported up front."""
        return self.identity.key

    @property
    def identity(self) -> AgentIdentity:
        """Who this agent is to Companies (spec 4.1). Read from identity.json on first use; a
        development identity (loopback client_id) is served on 127.0.0.1 from then on."""
        if self._identity is None:
            from poppy_tui.agent.identity import load_identity

            self._identity = load_identity(self.paths, self.config.allow_loopback, self._key_loader)
        return self._identity

    def signing_key_loaded(self) -> bool:
        """Whether the signing key is loaded (it is kept from then on), known without touching
        the keyring: an agent that only browses never loads it."""
        return self._identity is not None and self._identity.key_loaded

    def signing_problem(self) -> str | None:
        """Why requests (approvals included) can't be signed on this machine, with the fix; or None.
        Loads the key (once: it is kept after the first success)."""
        if self.signing_key_loaded():
            return None  # asked before every send: once loaded, nothing more to look at
        from poppy_tui.agent.keys import KeyStorageError
        from poppy_tui.protocol.client_metadata import IdentityError

        try:
            self.signing_key()
        except (KeyStorageError, IdentityError) as exc:
            # No key, or no identity (identity.json unreadable, or none and no loopback allowed).
            return str(exc)
        return None

    def startup_signing_problem(self) -> str | None:
        """signing_problem without touching the secret when the keyring can be judged by its
        backend alone: for a warning when the TUI starts, which must not wait on a keyring prompt."""
        from poppy_tui.agent.keys import KeyStorageError, keyring_problem, storage_mode

        try:
            if storage_mode(self.config) == "keyring" and keyring_problem() is None:
                return None  # a usable backend; the secret itself is read at the first approval
        except KeyStorageError as exc:
            return str(exc)
        # An unusable backend is refused before any secret is touched; a key file is cheap to read.
        return self.signing_problem()

    def _client_identity(self) -> ClientIdentity:
        """Who the agent is at a Company's authorization server: its identity (spec 4.1)."""
        return self.identity
