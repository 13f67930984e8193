"""Another local program holding a port: a plain HTTP server (the standard library's) that serves
the documents it is given, or redirects every request elsewhere. Nothing from poppy_tui."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class PortSquatter:
    """Another local program on the port: serves `documents` (path -> JSON), or redirects."""

    def __init__(
        self, port: int, documents: dict[str, object], redirect_to: str | None = None
    ) -> None:
        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                if redirect_to is not None:
                    self.send_response(302)
                    self.send_header("Location", redirect_to + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = json.dumps(documents.get(self.path)).encode()
                self.send_response(200 if self.path in documents else 404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
