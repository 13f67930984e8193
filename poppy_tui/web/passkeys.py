"""`poppy-tui web --require-passkey`: approving on the page needs a WebAuthn user-verification step,
done by py_webauthn (the `webauthn` package: options, attestation and assertion checks), bound to
the operation and revision being approved. Declining never needs it.

A device adds its passkey once, right after pairing (/passkey). An approval then asks the browser
for an assertion over a challenge made for that device, operation and revision: 16 random bytes
followed by a SHA-256 of the Company's domain, the operation_id, the revision and our row ids, so
the signed data itself names what is approved. The challenge is kept here (one use, a few
minutes) with what it was made for; the assertion is accepted only for that device and that
revision, with user verification, from this page's origin and relying party.

A relying party can't be an IP address: on loopback the page is served and paired as `localhost`
(browsers treat http://localhost as a secure context, where WebAuthn works); elsewhere over TLS.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from poppy_tui.agent.paired_devices import Device, DeviceBook

CHALLENGE_SECONDS = 180.0
TIMEOUT_MS = 120_000
MAX_OPEN_CHALLENGES = 200


def bound_challenge(
    domain: str, operation_id: str, revision: str, operation_row: int, revision_id: int
) -> bytes:
    """16 random bytes, then a digest of exactly what is approved."""
    what = json.dumps([domain, operation_id, revision, operation_row, revision_id]).encode()
    return secrets.token_bytes(16) + hashlib.sha256(what).digest()


class PasskeyCeremonies:
    def __init__(self, devices: DeviceBook, rp_id: str, origin: str) -> None:
        self.devices = devices
        self.rp_id = rp_id
        self.origin = origin
        # challenge -> (kind, device id, (operation row, revision id) or None, made at)
        self._open: dict[bytes, tuple[str, int, tuple[int, int] | None, float]] = {}

    def routes(self, web: Any) -> list[Route]:
        self.web = web
        return [
            Route("/passkey", self.setup_page),
            Route("/passkey/options", self.registration_options, methods=["POST"]),
            Route("/passkey/register", self.register, methods=["POST"]),
            Route("/op/{row:int}/passkey/options", self.approval_options, methods=["POST"]),
        ]

    # ---- bookkeeping --------------------------------------------------------------------------

    def _remember(self, challenge: bytes, kind: str, device: Device, bound: Any) -> None:
        now = time.monotonic()
        for key, (_, _, _, made) in list(self._open.items()):
            if now - made > CHALLENGE_SECONDS:
                del self._open[key]
        while len(self._open) >= MAX_OPEN_CHALLENGES:
            self._open.pop(next(iter(self._open)))
        self._open[challenge] = (kind, device.id, bound, now)

    def _take(self, challenge: bytes, kind: str, device: Device, bound: Any) -> bool:
        found = self._open.pop(challenge, None)
        return (
            found is not None
            and found[0] == kind
            and found[1] == device.id
            and found[2] == bound
            and time.monotonic() - found[3] <= CHALLENGE_SECONDS
        )

    async def _json_request(self, request: Request) -> tuple[Device, dict[str, Any]] | Response:
        from poppy_tui.web.session import COOKIE

        device = self.web.device(request)
        if device is None:
            return JSONResponse({"error": "this browser is not paired"}, status_code=403)
        credential = request.cookies.get(COOKIE, "")
        if not self.web.csrf.valid(credential, request.headers.get("x-csrf-token")):
            return JSONResponse({"error": "reload the page (CSRF token)"}, status_code=403)
        from poppy_tui.web.guard import BodyTooLarge

        try:
            body = json.loads(await request.body() or b"{}")
        except BodyTooLarge:
            return JSONResponse({"error": "too large"}, status_code=413)
        except ValueError:
            return JSONResponse({"error": "not JSON"}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "not a JSON object"}, status_code=400)
        return device, body

    # ---- adding a passkey -----------------------------------------------------------------

    async def setup_page(self, request: Request) -> Response:
        device = self.web.device(request)
        if device is None:
            return self.web.not_paired()
        have = bool(self.devices.passkeys(device.id))
        return self.web.page("passkey.html", **self.web.values(request, device, have=have))

    async def registration_options(self, request: Request) -> Response:
        from webauthn import generate_registration_options, options_to_json
        from webauthn.helpers.structs import (
            AuthenticatorSelectionCriteria,
            PublicKeyCredentialDescriptor,
            ResidentKeyRequirement,
            UserVerificationRequirement,
        )

        got = await self._json_request(request)
        if isinstance(got, Response):
            return got
        device, _ = got
        from poppy_tui.web.html import plain

        options = generate_registration_options(
            rp_id=self.rp_id,
            rp_name="poppy-tui",
            user_id=f"poppy-device-{device.id}".encode(),
            user_name=plain(device.name, 40) or "device",
            timeout=TIMEOUT_MS,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.PREFERRED,
                user_verification=UserVerificationRequirement.REQUIRED,
            ),
            exclude_credentials=[
                PublicKeyCredentialDescriptor(id=key.credential_id)
                for key in self.devices.passkeys(device.id)
            ],
        )
        self._remember(options.challenge, "register", device, None)
        return Response(options_to_json(options), media_type="application/json")

    async def register(self, request: Request) -> Response:
        from webauthn import verify_registration_response
        from webauthn.helpers import parse_client_data_json
        from webauthn.helpers.base64url_to_bytes import base64url_to_bytes

        got = await self._json_request(request)
        if isinstance(got, Response):
            return got
        device, body = got
        try:
            client_data = parse_client_data_json(
                base64url_to_bytes(body["response"]["clientDataJSON"])
            )
            challenge = client_data.challenge
            if not self._take(challenge, "register", device, None):
                return JSONResponse({"error": "that step expired; try again"}, status_code=400)
            verified = verify_registration_response(
                credential=body,
                expected_challenge=challenge,
                expected_rp_id=self.rp_id,
                expected_origin=self.origin,
                require_user_verification=True,
            )
        except Exception as exc:  # noqa: BLE001 - any malformed or failed ceremony: one line, nothing kept
            return JSONResponse({"error": f"not accepted: {str(exc)[:200]}"}, status_code=400)
        self.devices.add_passkey(
            device.id, verified.credential_id, verified.credential_public_key, verified.sign_count
        )
        return JSONResponse({"ok": True})

    # ---- an approval --------------------------------------------------------------------------

    async def approval_options(self, request: Request) -> Response:
        from webauthn import generate_authentication_options, options_to_json
        from webauthn.helpers.structs import (
            PublicKeyCredentialDescriptor,
            UserVerificationRequirement,
        )

        got = await self._json_request(request)
        if isinstance(got, Response):
            return got
        device, body = got
        keys = self.devices.passkeys(device.id)
        if not keys:
            return JSONResponse(
                {"error": "this device has no passkey yet: add one at /passkey"}, status_code=400
            )
        row = request.path_params["row"]
        try:
            record = self.web.agent.store.get_operation(row)
            revision_id = int(body.get("revision_id", ""))
        except (KeyError, ValueError):
            return JSONResponse({"error": "no such operation or revision"}, status_code=404)
        if revision_id != record.current.id:
            return JSONResponse({"error": "new terms arrived; read them first"}, status_code=409)
        challenge = bound_challenge(
            record.company.domain,
            record.operation_id,
            record.current.revision,
            row,
            revision_id,
        )
        options = generate_authentication_options(
            rp_id=self.rp_id,
            challenge=challenge,
            timeout=TIMEOUT_MS,
            allow_credentials=[PublicKeyCredentialDescriptor(id=k.credential_id) for k in keys],
            user_verification=UserVerificationRequirement.REQUIRED,
        )
        self._remember(challenge, "approve", device, (row, revision_id))
        return Response(options_to_json(options), media_type="application/json")

    def verify_approval(self, device: Device, review: Any, assertion: str) -> str | None:
        """None when `assertion` is this device's passkey, user-verified, over a challenge made
        for this operation and revision; else why not (nothing is approved)."""
        from webauthn import verify_authentication_response
        from webauthn.helpers import parse_client_data_json
        from webauthn.helpers.base64url_to_bytes import base64url_to_bytes

        if not assertion:
            return "this page asks for your passkey first (it needs JavaScript and a passkey)"
        try:
            body = json.loads(assertion)
            raw_id = base64url_to_bytes(body["rawId"])
            client_data = parse_client_data_json(
                base64url_to_bytes(body["response"]["clientDataJSON"])
            )
        except Exception:  # noqa: BLE001 - a malformed answer: said on the page, nothing approved
            return "the passkey's answer could not be read"
        bound = (review.record.id, review.revision_id)
        if not self._take(client_data.challenge, "approve", device, bound):
            return "the passkey step was for another operation or revision, or it expired"
        key = next((k for k in self.devices.passkeys(device.id) if k.credential_id == raw_id), None)
        if key is None:
            return "that passkey is not this device's"
        try:
            verified = verify_authentication_response(
                credential=body,
                expected_challenge=client_data.challenge,
                expected_rp_id=self.rp_id,
                expected_origin=self.origin,
                credential_public_key=key.public_key,
                credential_current_sign_count=key.sign_count,
                require_user_verification=True,
            )
        except Exception as exc:  # noqa: BLE001 - a failed check: said on the page, nothing approved
            return f"the passkey's answer was not accepted ({str(exc)[:200]})"
        self.devices.used_passkey(key.credential_id, verified.new_sign_count)
        return None
