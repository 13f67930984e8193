"""Session JWTs and client assertions are signed by PyJWT with the key named by its thumbprint:
the header and claims as given, a signature PyJWT verifies with that key alone, and the public
JWK PyJWT would publish."""

from __future__ import annotations

import json

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.protocol.client_metadata import public_jwk
from poppy_tui.protocol.session_jwt import _key_id, sign_with_kid


@pytest.mark.parametrize("seed", range(8))
def test_signed_with_the_kid_and_verified_by_pyjwt(seed):
    key = ec.generate_private_key(ec.SECP256R1())
    claims = {
        "iss": "https://agent.example/agent.json",
        "aud": "https://shop.example",
        "sid": f"ses_{seed}",
        "iat": 1_800_000_000 + seed,
        "exp": 1_800_000_300 + seed,
        "jti": "jti_\u00e9\u202e",
    }
    token = sign_with_kid(key, claims, "poppy-session+jwt")
    reference = jwt.encode(
        claims, key, algorithm="ES256", headers={"typ": "poppy-session+jwt", "kid": _key_id(key)}
    )
    assert token.split(".")[:2] == reference.split(".")[:2]
    assert jwt.get_unverified_header(token) == {
        "alg": "ES256",
        "kid": _key_id(key),
        "typ": "poppy-session+jwt",
    }
    decoded = jwt.decode(
        token,
        key.public_key(),
        algorithms=["ES256"],
        audience="https://shop.example",
        options={"verify_exp": False, "verify_iat": False},
    )
    assert decoded == claims
    other = ec.generate_private_key(ec.SECP256R1())
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(
            token,
            other.public_key(),
            algorithms=["ES256"],
            options={"verify_aud": False, "verify_exp": False},
        )


@pytest.mark.parametrize("seed", range(8))
def test_public_jwk_is_pyjwts(seed):
    key = ec.generate_private_key(ec.SECP256R1()).public_key()
    assert public_jwk(key) == json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key))
