"""Serve a development identity's CIMD and JWKS on 127.0.0.1, so --demo and the tests run
offline: a Company fetches them exactly as it would from https://.

One small threaded HTTP server per port and process, started on first use and kept for the
life of the process (daemon thread). If the port is already served by another poppy-tui
process using the same home, that process's copy is used (same client_id, same key).
"""

from __future__ import annotations

import errno
import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from poppy_tui.protocol.client_metadata import IdentityError


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int) -> None:
        self.documents: dict[str, bytes] = {}
        super().__init__(("127.0.0.1", port), _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 (http.server's spelling)
        body = self.server.documents.get(urlsplit(self.path).path)
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "max-age=60")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # the TUI owns the terminal
        pass


IDLE_POLL_SECONDS = 5.0
_servers: dict[int, _Server] = {}
_lock = threading.Lock()


class PortTaken(IdentityError):
    """The port is held by a program that does not serve this identity."""


def _encode(document: dict[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode("utf-8")


def serve(port: int, documents: dict[str, dict[str, Any]]) -> None:
    """Serve `path -> JSON document` on 127.0.0.1:port from this process."""
    with _lock:
        server = _servers.get(port)
        if server is None:
            server = _Server(port)  # OSError if the port is taken
            _servers[port] = server
            # A long poll interval: an idle publisher (one per home a test process opens) costs
            # nothing between requests; it only bounds how long stop_all() waits.
            threading.Thread(
                target=server.serve_forever, kwargs={"poll_interval": IDLE_POLL_SECONDS},
                name=f"poppy-identity-{port}", daemon=True,
            ).start()
        for path, document in documents.items():
            server.documents[path] = _encode(document)


def _served_elsewhere(url: str, expected: dict[str, Any]) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3) as response:  # noqa: S310 (a loopback URL we built)
            return json.loads(response.read(1024 * 1024)) == expected
    except (OSError, ValueError):
        return False


def publish(settings: Any, metadata: dict[str, Any], jwks: dict[str, Any]) -> None:
    port = settings.loopback_port
    assert port is not None, "only a loopback identity is published here"
    documents = {urlsplit(settings.client_id).path: metadata, urlsplit(settings.jwks_uri).path: jwks}
    try:
        serve(port, documents)
        return
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise IdentityError(f"can't serve the agent's identity on 127.0.0.1:{port} ({exc})") from None
    # Another poppy-tui with this home may be serving the very same documents.
    if _served_elsewhere(settings.client_id, metadata) and _served_elsewhere(settings.jwks_uri, jwks):
        return
    raise PortTaken(f"127.0.0.1:{port}, where this agent's development identity lives, is used by another program")


def stop_all() -> None:
    """For tests that must free their ports."""
    with _lock:
        for server in _servers.values():
            server.shutdown()
            server.server_close()
        _servers.clear()
