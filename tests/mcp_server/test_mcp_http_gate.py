"""`poppy-tui mcp --http`: the real subprocess on loopback, refusing what it must (token, Host,
Origin, body size, non-loopback without --allow-remote), serving https with a throwaway CA, and
the stdio server's tools and promises over streamable HTTP, driven by the MCP SDK's client."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import os
import re
import ssl
import stat

import httpx
import pytest

from poppy_tui.agent.store import Status
from poppy_tui.cli.main import main
from poppy_tui.ui.app import PoppyApp
from tests.mcp_server.conftest import approve_in_tui, person_agent, wait_for_status
from tests.mcp_server.http_support import http_session, raw_post, running_gate, start_gate, token_of
from tests.ui.ui_sample import wait_for

pytestmark = pytest.mark.slow

TOOLS = {
    "list_companies",
    "describe_company",
    "call_api",
    "call_company_tool",
    "talk_to_company",
    "operation_status",
    "wait_for_decision",
    "list_pending",
}
DECISION_WORDS = re.compile(r"approve|decline|withdraw|resolve|confirm|consent|allow", re.I)
CANCEL = {
    "company": "birchwood",
    "method": "POST",
    "path": "/v1/appointments/apt_77/cancel",
    "body": {},
}


def text_of(result) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "type", "") == "text")


def assert_no_token_in(gate, *tokens: str) -> None:
    for token in tokens:
        assert token not in gate.out and token not in gate.err


# ---- the token -------------------------------------------------------------------------------


def test_missing_wrong_or_other_scheme_tokens_get_401_and_never_reach_a_tool(
    home, birchwood, tmp_path
):
    with running_gate(home, tmp_path) as gate:
        token = token_of(home)
        missing = raw_post(gate.url)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"] == 'Bearer realm="poppy-tui"'
        assert "poppy-tui mcp token" in missing.json()["error"]["message"]
        for wrong in (
            token[:-1] + ("A" if token[-1] != "A" else "B"),
            token[:-1],
            token + "x",
            "x" * 43,
        ):
            refused = raw_post(gate.url, headers={"Authorization": f"Bearer {wrong}"})
            assert refused.status_code == 401, wrong
            assert refused.headers["www-authenticate"].startswith("Bearer")
        for other in (f"Basic {token}", token, f"Bearer  {token} extra", "Bearer"):
            assert raw_post(gate.url, headers={"Authorization": other}).status_code == 401
        assert (
            raw_post(gate.url, headers={"Authorization": f"bearer {token}"}).status_code == 200
        )  # RFC 9110: case-insensitive

        # A session opened with the token, then a tools/call on it with a wrong one: refused before any tool.
        opened = raw_post(gate.url, token=token)
        session = opened.headers["mcp-session-id"]
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "call_api", "arguments": {**CANCEL, "wait_seconds": 0}},
        }
        refused = raw_post(
            gate.url,
            call,
            token="not-" + token,
            headers={"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"},
        )
        assert refused.status_code == 401
        refused = raw_post(
            gate.url,
            call,
            headers={"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"},
        )
        assert refused.status_code == 401
        assert birchwood.approvals == [] and birchwood.performed == []
        agent = person_agent(home)
        try:
            assert agent.store.list_operations(list(Status)) == []
        finally:
            asyncio.run(agent.aclose())
    assert_no_token_in(gate, token)


async def test_a_rotated_token_is_refused_by_the_running_server_at_once(
    home, birchwood, tmp_path, capsys
):
    with running_gate(home, tmp_path) as gate:
        old = token_of(home)
        async with http_session(gate.url, old) as session:
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS
        assert main(["mcp", "token", "--rotate"]) == 0
        printed = capsys.readouterr()
        new = printed.out.strip()
        assert new != old and len(new) >= 43 and re.fullmatch(r"[A-Za-z0-9_-]+", new)
        assert "refused from now on" in printed.err and new not in printed.err
        assert raw_post(gate.url, token=old).status_code == 401  # no restart, no wait
        async with http_session(gate.url, new) as session:
            listed = await session.call_tool("list_companies", {})
            assert listed.structured_content["companies"][0]["name"] == "Birchwood Dental"
        assert main(["mcp", "token"]) == 0
        assert capsys.readouterr().out.strip() == new
        path = home / "data" / "mcp-http-token"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        path.chmod(0o644)  # readable by others: no longer a secret, so nothing is accepted
        assert raw_post(gate.url, token=new).status_code == 401
        path.chmod(0o600)
        assert raw_post(gate.url, token=new).status_code == 200
        path.unlink()  # gone: nothing is accepted until there is a token again
        assert raw_post(gate.url, token=new).status_code == 401
        assert main(["mcp", "token", "--rotate"]) == 0
        newest = capsys.readouterr().out.strip()
        assert raw_post(gate.url, token=newest).status_code == 200
    assert_no_token_in(gate, old, new, newest)
    assert (
        "can be read by others (mode 0644): the token of the agent 'default' is refused" in gate.err
    )
    assert "mcp-http-token is gone: the token of the agent 'default' is refused" in gate.err


def test_the_token_is_made_on_first_use_with_mode_0600_and_kept(home, tmp_path, capsys):
    old_umask = os.umask(0)  # even with a umask that would leave it world-readable
    try:
        assert main(["mcp", "token"]) == 0
    finally:
        os.umask(old_umask)
    token = capsys.readouterr().out.strip()
    path = home / "data" / "mcp-http-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == token and len(token) >= 43  # token_urlsafe(32): 256 bits
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert main(["mcp", "token"]) == 0
    assert capsys.readouterr().out.strip() == token
    assert main(["mcp", "--help"]) == 0
    assert main(["mcp", "token", "--help"]) == 0
    assert token not in capsys.readouterr().out
    path.chmod(0o644)  # widened by someone: refused, with what to do
    assert main(["mcp", "token"]) == 1
    assert "mode 0644" in capsys.readouterr().err
    assert main(["mcp", "token", "--rotate"]) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# ---- Host and Origin (DNS rebinding) ---------------------------------------------------------


def test_requests_naming_another_host_get_421_and_other_sites_origins_403(home, tmp_path):
    with running_gate(home, tmp_path, "--allow-host", "host.docker.internal") as gate:
        token, port = token_of(home), gate.port

        def status(**headers: str) -> int:
            return raw_post(gate.url, token=token, headers=headers).status_code

        assert status() == 200
        # The name counts, not the port: a forward (ssh -R 9000:127.0.0.1:PORT, docker -p) keeps the client's.
        for host in (
            f"localhost:{port}",
            f"127.0.0.1:{port}",
            f"LOCALHOST:{port}",
            f"[::1]:{port}",
            f"host.docker.internal:{port}",
            "localhost:9000",
            "127.0.0.1",
            "localhost.",
        ):
            assert status(Host=host) == 200, host
        for host in (
            f"evil.example:{port}",
            "evil.example",
            f"attacker.example.127.0.0.1.nip.io:{port}",
            f"localhost.evil.example:{port}",
            f"127.0.0.1:{port}x",
            f"127.0.0.2:{port}",
            "",
            f"::1:{port}",
            f"user@127.0.0.1:{port}",
        ):
            refused = raw_post(gate.url, token=token, headers={"Host": host})
            assert refused.status_code == 421, host
            assert "--allow-host" in refused.json()["error"]["message"]
        for origin in (
            f"http://127.0.0.1:{port}",
            f"http://localhost:{port}",
            f"http://host.docker.internal:{port}",
        ):
            assert status(Origin=origin) == 200, origin
        for origin in (
            "http://evil.example",
            f"http://evil.example:{port}",
            "null",
            f"https://127.0.0.1:{port}",
            f"http://127.0.0.1:{port + 1}",
            "http://127.0.0.1",
            f"http://127.0.0.1:{port}/path",
            "*",
            f"http://user@127.0.0.1:{port}",
            "http://localhost:9000",
        ):
            refused = raw_post(gate.url, token=token, headers={"Origin": origin})
            assert refused.status_code == 403, origin
            assert "Origin" in refused.json()["error"]["message"]
        # A browser page under a rebound name sends no token either: refused before the token is looked at.
        assert raw_post(gate.url, headers={"Host": f"evil.example:{port}"}).status_code == 421
        assert raw_post(gate.url, headers={"Origin": "http://evil.example"}).status_code == 403


def test_bodies_past_one_mib_get_413(home, tmp_path):
    with running_gate(home, tmp_path) as gate:
        token = token_of(home)
        big = (
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'
            + b"x" * (1024 * 1024)
            + b'"}}'
        )
        assert raw_post(gate.url, token=token, content=big).status_code == 413

        def chunks():  # no Content-Length: counted as it arrives
            for _ in range(20):
                yield b"x" * 65536

        with httpx.Client(timeout=30) as client:
            answer = client.post(
                gate.url,
                content=chunks(),
                headers={
                    "Authorization": f"Bearer {token}",
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                },
            )
        assert answer.status_code == 413
        assert raw_post(gate.url, token=token).status_code == 200  # it still serves


# ---- where it listens --------------------------------------------------------------------------


@pytest.mark.parametrize("listen", ["0.0.0.0:0", "[::]:0", "192.0.2.1:8765"])
def test_a_non_loopback_listen_needs_allow_remote(home, capsys, listen):
    assert main(["mcp", "--http", "--listen", listen]) == 2
    err = capsys.readouterr().err
    assert "not a loopback address" in err and "--allow-remote" in err and "ssh -R" in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["mcp", "--http", "--listen", "127.0.0.1"], "HOST:PORT"),
        (
            ["mcp", "--http", "--listen", "127.0.0.1:99999"],
            "the port must be a number from 0 to 65535",
        ),
        (["mcp", "--http", "--listen", "::1:80"], "HOST:PORT"),
        (["mcp", "--http", "--listen", "no-such-host.invalid:80"], "can't resolve"),
        (["mcp", "--listen", "127.0.0.1:0"], "only with --http"),
        (["mcp", "--allow-remote"], "only with --http"),
        (["mcp", "--http", "--allow-host", "a.example:80"], "without a port"),
        (["mcp", "--http", "--tls-cert", "c.pem"], "go together"),
        (["mcp", "--http", "token"], "takes only --agent, --see-all and --rotate"),
        (["mcp", "--agent", "a", "agents"], "takes none of the gate's options"),
        (["mcp", "--http", "--agent", "laptop"], "work only on stdin/stdout"),
        (["mcp", "--http", "--see-all"], "work only on stdin/stdout"),
        (["mcp", "--agent", "two words"], "--agent: an agent's name is"),
        (["mcp", "token", "--agent", "default"], "choose another name"),
        (["mcp", "token", "--agent", "x\x1b[2J"], "an agent's name is"),
        (["mcp", "token", "--see-all"], "--see-all goes with --agent NAME"),
        (["mcp", "token", "--agent", "nobody", "--rotate"], "there is no agent 'nobody'"),
    ],
)
def test_bad_http_options_are_usage_errors(home, capsys, argv, says):
    assert main(argv) == 2
    assert says in capsys.readouterr().err


def test_allow_remote_listens_and_warns_that_it_is_plaintext(home, tmp_path):
    gate = start_gate(home, tmp_path, "--listen", "0.0.0.0:0", "--allow-remote")
    try:
        token = token_of(home)
        assert gate.url.startswith("http://127.0.0.1:")
        assert raw_post(gate.url, token=token).status_code == 200
    finally:
        gate.stop()
    assert "PLAINTEXT" in gate.err and "--tls-cert" in gate.err
    assert_no_token_in(gate, token)


def test_ipv6_loopback(home, tmp_path):
    import socket

    try:
        probe = socket.socket(socket.AF_INET6)
        probe.bind(("::1", 0))
        probe.close()
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    with running_gate(home, tmp_path, "--listen", "[::1]:0") as gate:
        assert gate.url.startswith("http://[::1]:")
        assert raw_post(gate.url, token=token_of(home)).status_code == 200
        assert (
            raw_post(gate.url, token=token_of(home), headers={"Host": "evil.example"}).status_code
            == 421
        )


def test_port_in_use_is_one_clear_line(home, tmp_path):
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        gate = start_gate(
            home, tmp_path, "--listen", f"127.0.0.1:{taken.getsockname()[1]}", expect_url=False
        )
        assert gate.stop() == 1
    finally:
        taken.close()
    assert "can't listen on 127.0.0.1" in gate.err and "Traceback" not in gate.err


# ---- TLS ---------------------------------------------------------------------------------------


def _throwaway_ca(folder):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "poppy-tui test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = {name: folder / f"{name}.pem" for name in ("ca", "cert", "key")}
    paths["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths["cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths["key"].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


async def test_tls_serves_https_that_a_client_trusting_the_ca_accepts(home, birchwood, tmp_path):
    pem = _throwaway_ca(tmp_path)
    trusted = ssl.create_default_context(cafile=str(pem["ca"]))
    with running_gate(
        home, tmp_path, "--tls-cert", str(pem["cert"]), "--tls-key", str(pem["key"])
    ) as gate:
        token = token_of(home)
        assert gate.url.startswith("https://127.0.0.1:")
        async with http_session(gate.url, token, verify=trusted) as session:
            listed = await session.call_tool("list_companies", {})
        assert listed.structured_content["companies"][0]["name"] == "Birchwood Dental"
        with pytest.raises(httpx.ConnectError):  # the system's CAs don't know the throwaway one
            raw_post(gate.url, token=token)
        with pytest.raises(httpx.HTTPError):  # plain http to the https port gets no MCP answer
            raw_post(gate.url.replace("https://", "http://"), token=token)
        assert raw_post(gate.url, token=token, verify=trusted).status_code == 200
        refused = raw_post(
            gate.url,
            token=token,
            verify=trusted,
            headers={"Origin": f"http://127.0.0.1:{gate.port}"},
        )  # http origin, https server
        assert refused.status_code == 403
    assert_no_token_in(gate, token)


def test_a_bad_tls_file_is_a_usage_error(home, tmp_path, capsys):
    (tmp_path / "bad.pem").write_text("not a certificate")
    assert (
        main(
            [
                "mcp",
                "--http",
                "--tls-cert",
                str(tmp_path / "bad.pem"),
                "--tls-key",
                str(tmp_path / "bad.pem"),
            ]
        )
        == 2
    )
    assert "can't use --tls-cert" in capsys.readouterr().err


# ---- the tools over HTTP -------------------------------------------------------------------------


async def test_tools_over_http_wait_with_progress_for_the_person_and_none_can_approve(
    home, birchwood, tmp_path
):
    progress: list[str] = []

    async def on_progress(value, total, message):
        progress.append(message or "")

    with running_gate(home, tmp_path) as gate:
        token = token_of(home)
        async with http_session(gate.url, token) as session:
            tools = (await session.list_tools()).tools
            assert {t.name for t in tools} == TOOLS
            for tool in tools:
                assert not DECISION_WORDS.search(tool.name)
                assert not any(
                    DECISION_WORDS.search(arg) for arg in tool.input_schema.get("properties", {})
                )
            unknown = await session.call_tool("call_api", {**CANCEL, "company": "nobody"})
            assert unknown.is_error and "unknown company 'nobody'" in text_of(unknown)
            at_once = await session.call_tool("call_api", {**CANCEL, "wait_seconds": 0})
            assert at_once.structured_content["result"] == "waiting_for_person"
            number = at_once.structured_content["operation"]["operation"]
            call = asyncio.create_task(
                session.call_tool(
                    "wait_for_decision",
                    {"operation": str(number), "wait_seconds": 120},
                    progress_callback=on_progress,
                )
            )
            agent = person_agent(home)
            try:
                app = PoppyApp(agent)
                async with app.run_test(size=(120, 36)) as pilot:
                    row = await wait_for_status(agent, {Status.PENDING})
                    # The progress notification arrives over the stream before any decision.
                    await wait_for(pilot, lambda: progress, 20, describe=lambda: "progress")
                    assert not call.done()
                    await approve_in_tui(app, pilot, row)
                    result = await asyncio.wait_for(call, 60)
            finally:
                await agent.aclose()
    assert result.is_error is False, text_of(result)
    assert result.structured_content["result"] == "performed"
    assert result.structured_content["response"]["state"] == "cancelled"
    assert birchwood.performed == ["apt_77"]
    assert "waiting for the person to decide in poppy-tui" in progress[0]
    assert "Company-written (untrusted): company «Birchwood Dental»" in progress[0]
    assert_no_token_in(gate, token)


async def test_stopping_with_a_call_waiting_is_quick_and_clean_and_the_operation_stays_queued(
    home, bench, tmp_path
):
    gate = start_gate(home, tmp_path)
    try:
        async with http_session(gate.url, token_of(home)) as session:
            waiting = asyncio.create_task(
                session.call_tool(
                    "call_api",
                    {
                        "company": "Bench Goods",
                        "method": "POST",
                        "path": "/items/7/cancel",
                        "wait_seconds": 600,
                    },
                )
            )
            agent = person_agent(home)
            try:
                await wait_for_status(agent, {Status.PENDING})
                assert (
                    await asyncio.to_thread(gate.stop) == 0
                )  # SIGTERM: within the 3 s grace, not 600 s
                assert [
                    (r.operation_id, r.status) for r in agent.store.list_operations(list(Status))
                ] == [("cxl_7", Status.PENDING)]
            finally:
                await agent.aclose()
            waiting.cancel()
    finally:
        gate.stop()
    assert "stopped; anything queued stays in the queue" in gate.err and "Traceback" not in gate.err
    assert bench.state.perform_count == {}
