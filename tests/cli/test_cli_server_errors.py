"""A request without an approval that meets a server error (500, 501, 507; JSON, HTML or empty)
is "outcome unknown" (exit 6), not "not performed": a 5xx says the Company failed, not that it
did nothing, and it may have acted first. A 4xx still says nothing was done (exit 5). Against a
Company written from the spec alone (poppy.json and one POST), served on 127.0.0.1."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from poppy_tui.cli.exit_codes import Exit
from tests.companies.serving import LoopbackServer

ANSWERS = {
    "json500": (500, b'{"error": "internal_error"}', "application/json"),
    "html500": (500, b"<html><body>Internal Server Error</body></html>", "text/html"),
    "empty501": (501, b"", "text/plain"),
    "json507": (507, b'{"error": "insufficient_storage"}', "application/json"),
    "json404": (404, b'{"error": "not_found"}', "application/json"),
    "json409": (409, b'{"error": "conflict"}', "application/json"),
}


def build_app(base_url: str) -> Starlette:
    async def poppy_json(request: Request) -> Response:
        return JSONResponse(
            {
                "protocol_version": "0.4",
                "organization": {"name": "Failing Goods", "domain": base_url.split("://", 1)[1]},
                "apis": [{"type": "openapi", "url": f"{base_url}/openapi.json"}],
            }
        )

    async def answer(request: Request) -> Response:
        status, body, kind = ANSWERS[request.path_params["kind"]]
        return Response(body, status_code=status, media_type=kind)

    return Starlette(
        routes=[
            Route("/.well-known/poppy.json", poppy_json),
            Route("/things/{kind}", answer, methods=["POST"]),
        ]
    )


@pytest.fixture
def failing(cli, home):
    served = LoopbackServer(build_app, "the failing Company")
    try:
        assert cli("companies", "add", served.base_url).code == Exit.OK
        yield served
    finally:
        served.stop()


@pytest.mark.parametrize("kind", ["json500", "html500", "empty501", "json507"])
def test_a_server_error_to_a_request_is_outcome_unknown(cli, failing, kind):
    run = cli("call", "Failing Goods", "POST", f"/things/{kind}", "--body", "{}")
    assert run.code == Exit.UNKNOWN, run.err
    assert "not performed" not in run.err.lower()


@pytest.mark.parametrize("kind", ["json404", "json409"])
def test_a_client_error_still_says_nothing_was_done(cli, failing, kind):
    run = cli("call", "Failing Goods", "POST", f"/things/{kind}", "--body", "{}")
    assert run.code == Exit.NOT_PERFORMED, run.err
