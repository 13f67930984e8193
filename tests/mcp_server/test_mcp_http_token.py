"""The HTTP gate's token file (standard library only): made once, atomically, with mode 0600;
a server's TokenFile follows a rotation, a chmod and a removal on its next request."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from poppy_tui.agent.gate.default_token import TokenError, TokenFile, read_or_create, rotate


def test_first_uses_at_once_agree_on_one_token(tmp_path):
    path = tmp_path / "data" / "mcp-http-token"
    tokens: list[str] = []
    start = threading.Barrier(8)

    def first_use() -> None:
        start.wait()
        tokens.append(read_or_create(path))

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(tokens) == 8 and len(set(tokens)) == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["mcp-http-token"]  # no temporary files left


def test_a_server_follows_rotation_chmod_and_removal(tmp_path):
    path = tmp_path / "mcp-http-token"
    served = TokenFile(path)
    first = path.read_text().strip().encode()
    assert served.accepts(first) and not served.accepts(first[:-1]) and not served.accepts(b"")
    second = rotate(path).encode()
    assert not served.accepts(first) and served.accepts(second)
    path.chmod(0o640)
    assert not served.accepts(second)
    path.chmod(0o600)
    assert served.accepts(second)
    path.unlink()
    assert not served.accepts(second)


@pytest.mark.parametrize("content", ["", "short", "x" * 40 + " spaces " + "y" * 10, "\x00" * 50])
def test_a_file_that_holds_no_usable_token_is_refused(tmp_path, content):
    path = tmp_path / "mcp-http-token"
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, content.encode())
    os.close(fd)
    with pytest.raises(TokenError, match="--rotate"):
        read_or_create(path)
    assert len(rotate(path)) >= 43
    assert read_or_create(path) == path.read_text().strip()


# ---- named agents (agent/gate/registry.py, credentials.py) ---------------------------------


def test_agents_made_at_once_are_all_kept_and_only_their_hashes(tmp_path):
    from poppy_tui.agent.gate.registry import create, read_entries, registry_path

    path = registry_path(tmp_path)
    tokens: dict[str, str] = {}
    start = threading.Barrier(8)

    def make(index: int) -> None:
        start.wait()
        tokens[f"agent-{index}"] = create(path, f"agent-{index}")

    threads = [threading.Thread(target=make, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(e.name for e in read_entries(path)) == sorted(tokens)  # no change lost
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    kept = path.read_text()
    assert not any(token in kept for token in tokens.values())
    assert len(set(tokens.values())) == 8 and all(len(t) >= 43 for t in tokens.values())


def test_a_running_server_knows_each_token_as_its_own_agent_and_follows_changes(tmp_path):
    from poppy_tui.agent.gate.credentials import Credentials
    from poppy_tui.agent.gate.registry import create, registry_path
    from poppy_tui.agent.gate.roster import revoke

    path = registry_path(tmp_path)
    served = Credentials(tmp_path)  # before any token exists; no default is made for it
    assert not (tmp_path / "mcp-http-token").exists()
    alpha = create(path, "alpha")
    beta = create(path, "beta", see_all=True)
    found_alpha, found_beta = served.identify(alpha.encode()), served.identify(beta.encode())
    assert (found_alpha.name, found_alpha.see_all) == ("alpha", False)
    assert (found_beta.name, found_beta.see_all) == ("beta", True)
    assert served.identify(alpha[:-1].encode()) is None and served.identify(b"") is None
    before = served.principals()
    new_alpha = create(path, "alpha", replace=True)  # rotated: the old one is refused at once
    assert served.identify(alpha.encode()) is None
    assert served.identify(new_alpha.encode()).name == "alpha"
    assert served.identify(new_alpha.encode()).principal != found_alpha.principal
    assert found_alpha.principal not in served.principals() and found_alpha.principal in before
    assert revoke(tmp_path, "beta") and served.identify(beta.encode()) is None
    assert not revoke(tmp_path, "beta")
    default = read_or_create(tmp_path / "mcp-http-token")
    assert served.identify(default.encode()).name == "default"
    assert revoke(tmp_path, "default") and served.identify(default.encode()) is None
    path.chmod(0o644)  # readable by others: every named agent is refused until fixed
    assert served.identify(new_alpha.encode()) is None
    path.chmod(0o600)
    assert served.identify(new_alpha.encode()).name == "alpha"
