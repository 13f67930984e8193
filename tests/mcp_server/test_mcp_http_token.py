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
