"""A Company written from the operations extension v2 text alone (no poppy_tui.demo imports):
"Birchwood Dental", an HTTP API only, in euros, with its own ids, an answer that is JSON the
demo never sends, and an optional hostile summary. Served for real on 127.0.0.1 by uvicorn."""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.waiting import wait_until_blocking

REVISION = "rev-0001"
OPERATION_ID = "cxl_Birch42"
SUMMARY = "Cancel your cleaning appointment apt_77 on 12 December, for a late-cancellation fee of EUR 25.00."


@dataclass
class SpecCompany:
    base_url: str = ""
    summary: str = SUMMARY
    name: str = "Birchwood Dental"
    performed: list[str] = field(default_factory=list)
    approvals: list[str] = field(default_factory=list)
    bodies: list[Any] = field(
        default_factory=list
    )  # every request body received, as JSON (None when empty)
    server: Any = None
    thread: Any = None

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def _app(company: SpecCompany) -> Starlette:
    async def poppy_json(request: Request) -> JSONResponse:
        domain = request.url.netloc
        return JSONResponse(
            {
                "protocol_version": "0.4",
                "organization": {"name": company.name, "domain": domain},
                "apis": [{"type": "openapi", "url": f"http://{domain}/openapi.json"}],
                "extensions": {"operations": [{"version": "2"}]},
            }
        )

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "openapi": "3.1.0",
                "info": {"title": "Birchwood", "version": "1"},
                "paths": {
                    "/v1/appointments/{appointment_id}/cancel": {
                        "post": {
                            "operationId": "cancelAppointment",
                            "summary": "Cancel an appointment",
                            "parameters": [
                                {
                                    "name": "appointment_id",
                                    "in": "path",
                                    "required": True,
                                    "schema": {"type": "string"},
                                }
                            ],
                            "requestBody": {
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Reason"}
                                    }
                                }
                            },
                        }
                    }
                },
                "components": {
                    "schemas": {
                        "Reason": {"type": "object", "properties": {"reason": {"type": "string"}}}
                    }
                },
            }
        )

    async def cancel(request: Request) -> JSONResponse:
        appointment = request.path_params["appointment_id"]
        raw = await request.body()
        company.bodies.append(json.loads(raw) if raw else None)
        # One operation_id for every cancellation (as the spec allows); each appointment is a revision.
        revision = REVISION if appointment == "apt_77" else f"rev-{appointment}"
        approval = request.headers.get("poppy-approval")
        if approval is None:
            return JSONResponse(
                {
                    "error": "approval_required",
                    "operation": {
                        "operation_id": OPERATION_ID,
                        "revision": revision,
                        "summary": company.summary,
                        "terms": {
                            "appointment_id": appointment,
                            "fee": {"amount": "25.00", "currency": "EUR"},
                        },
                        "expires_at": time.strftime(
                            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 900)
                        ),
                    },
                },
                status_code=403,
            )
        company.approvals.append(approval)
        if (
            f'operation_id="{OPERATION_ID}"' not in approval
            or f'revision="{revision}"' not in approval
        ):
            return JSONResponse({"error": "invalid_approval"}, status_code=400)
        company.performed.append(appointment)
        return JSONResponse(
            {"appointment": appointment, "state": "cancelled", "fee_charged": "EUR 25.00"}
        )

    return Starlette(
        routes=[
            Route("/.well-known/poppy.json", poppy_json),
            Route("/openapi.json", openapi),
            Route("/v1/appointments/{appointment_id}/cancel", cancel, methods=["POST"]),
        ]
    )


def start_spec_company(summary: str = SUMMARY, name: str = "Birchwood Dental") -> SpecCompany:
    company = SpecCompany(summary=summary, name=name)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    company.base_url = f"http://127.0.0.1:{port}"
    server = uvicorn.Server(uvicorn.Config(_app(company), log_level="warning", lifespan="off"))
    company.server = server
    company.thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    company.thread.start()
    wait_until_blocking(
        lambda: server.started, timeout=10, step=0.01, describe="the spec Company starting"
    )
    return company
