"""The agent fixtures (a real in-memory keyring backend, private paths, make_agent) for the
network tests too."""

from tests.agent.conftest import make_agent, memory_keyring, paths  # noqa: F401
