"""`poppy-tui web`'s commands: where it may listen (the MCP gate's rules and messages, and TLS for
any other address than loopback), `web pair` (a link that pairs once), `web devices`, and
`web revoke NAME`, which ends a device at its next request, its live stream too."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl

import httpx
import pytest

from poppy_tui.agent.store import Status
from tests.cli.cli_support import run_main
from tests.web.web_support import (
    Browserless,
    make_home,
    queue_cancel,
    register,
    running_web,
    status_of,
)


@pytest.fixture
def home_env(web_home, monkeypatch):
    monkeypatch.setenv("POPPY_TUI_HOME", str(web_home))
    return web_home


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["web", "--listen", "10.1.2.3:0"], "is not a loopback address"),
        (["web", "--listen", "10.1.2.3:0", "--allow-remote"], "needs --tls-cert and --tls-key"),
        (["web", "--listen", "nonsense"], "--listen wants HOST:PORT"),
        (["web", "--listen", "127.0.0.1:70000"], "the port must be a number from 0 to 65535"),
        (["web", "--tls-cert", "c.pem"], "go together"),
        (["web", "--allow-host", "a/b"], "--allow-host wants a host name"),
        (["web", "--require-passkey", "--public-url", "https://10.0.0.1"], "not an IP address"),
        (["web", "--public-url", "https://x.test/path"], "--public-url wants an origin"),
        (["web", "--listen", "127.0.0.1:0", "pair"], "go with 'poppy-tui web' itself"),
    ],
)
def test_where_it_may_listen_is_checked_first(home_env, capsys, argv, said):
    run = run_main(capsys, *argv)
    assert run.code == 2 and said in run.err and "Traceback" not in run.err


def test_pair_says_so_when_no_page_is_served(tmp_path, monkeypatch, capsys):
    from tests.web.web_support import make_home

    monkeypatch.setenv("POPPY_TUI_HOME", str(make_home(tmp_path / "home")))
    run = run_main(capsys, "web", "pair")
    assert run.code == 1 and "poppy-tui web is not running" in run.err
    run = run_main(capsys, "web", "devices")
    assert run.code == 0 and "No devices are paired." in run.out


def test_pair_devices_revoke(web, home_env, travel, capsys):
    run = run_main(capsys, "web", "pair")
    assert run.code == 0 and "works once" in run.err
    link = run.out.strip().splitlines()[-1]
    assert link.startswith(web.url + "/pair/") and "█" in run.out  # the QR code, in text
    pairing = run_main(capsys, "web", "pair", "--json")
    link = json.loads(pairing.out)["link"]
    browser = Browserless(web)
    try:
        path = link.split(web.url, 1)[1]
        answer = browser.client.post(path, data={"name": "Desk"}, headers={"origin": web.url})
        assert answer.status_code == 303
        from tests.web.web_support import device_cookie

        browser.credential = device_cookie(answer)["value"]
        row = queue_cancel(home_env, travel)
        assert browser.get(f"/op/{row}").status_code == 200
        listed = run_main(capsys, "web", "devices")
        assert "Desk  paired" in listed.out and "last seen" in listed.out
        as_json = json.loads(run_main(capsys, "web", "devices", "--json").out)
        assert "Desk" in [d["name"] for d in as_json["devices"]]
        unknown = run_main(capsys, "web", "revoke", "nobody")
        assert unknown.code == 1 and "no paired device is named 'nobody'" in unknown.err
        with httpx.Client(base_url=web.url, timeout=30) as client:
            with client.stream("GET", "/events", headers=browser.headers()) as stream:
                assert stream.status_code == 200
                lines = stream.iter_lines()
                assert next(lines) == "retry: 1000"
                revoked = run_main(capsys, "web", "revoke", "desk")
                assert revoked.code == 0 and "Revoked Desk" in revoked.out
                # The open stream says so and ends.
                assert "event: revoked" in list(lines)
        # Out at its next request: nothing shown, nothing decided.
        page = browser.get(f"/op/{row}")
        assert page.status_code == 403 and "Strict Travel" not in page.text
        refused = browser.post(f"/op/{row}/decline/yes", {"revision_id": "1", "csrf": "x"})
        assert refused.status_code == 403
        assert status_of(home_env, row) == Status.PENDING
        assert "Desk" not in run_main(capsys, "web", "devices").out
    finally:
        browser.close()


def _self_signed(folder):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "poppy-tui test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
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
        .sign(key, hashes.SHA256())
    )
    paths = {"cert": folder / "cert.pem", "key": folder / "key.pem"}
    paths["cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths["key"].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


def test_over_tls_and_with_a_passkey_it_is_served_by_name(tmp_path):
    # A home of its own: a second `poppy-tui web` on the module's home would take over its
    # announcement (web pair's address) and remove it on stopping.
    web_home = make_home(tmp_path / "home")
    pem = _self_signed(tmp_path)
    trusted = ssl.create_default_context(cafile=str(pem["cert"]))
    with running_web(
        web_home, tmp_path, "--tls-cert", str(pem["cert"]), "--tls-key", str(pem["key"])
    ) as server:
        assert server.url.startswith("https://127.0.0.1:")
        with httpx.Client(base_url=server.url, verify=trusted) as client:
            assert client.get("/").status_code == 403  # served, and not paired
        with pytest.raises(httpx.HTTPError):
            httpx.get(server.url.replace("https://", "http://") + "/", timeout=10)
    # A passkey's relying party can't be an IP address: on loopback it is localhost.
    with running_web(web_home, tmp_path, "--require-passkey") as server:
        assert server.url.startswith("http://localhost:")
    assert "approving on the page needs a passkey" in server.err


def test_behind_a_tunnel_its_public_origin_pairs_and_decides(travel, tmp_path):
    from tests.web.web_support import device_cookie, new_link

    web_home = make_home(tmp_path / "home")  # its own, as above
    register(web_home, travel.base_url)
    public = "https://poppy.example.net"
    with running_web(web_home, tmp_path, "--public-url", public) as server:
        assert server.url == public  # the address it announces, and pairing links start with
        link = new_link(web_home)
        assert link.startswith(public + "/pair/")
        local = server.local
        assert local.startswith("http://127.0.0.1:")
        path = link.split(public, 1)[1]
        as_tunnel = {"host": "poppy.example.net", "origin": public}
        with httpx.Client(base_url=local) as client:
            paired = client.post(path, data={"name": "far phone"}, headers=as_tunnel)
            assert paired.status_code == 303
            cookie = {"cookie": f"__Host-poppy-device={device_cookie(paired)['value']}"}
            row = queue_cancel(web_home, travel)
            page = client.get(f"/op/{row}", headers={**as_tunnel, **cookie})
            assert page.status_code == 200
            # Another site's Origin is still refused, through the tunnel's name too.
            evil = {**as_tunnel, **cookie, "origin": "https://evil.test"}
            assert client.post(f"/op/{row}/decline/yes", headers=evil).status_code == 403
