"""A throwaway certificate authority for loopback TLS servers in tests: a real X.509 chain
made with `cryptography`, trusted by the agent's clients through SSL_CERT_FILE (which httpx2
honours), so TLS, hostname checks and SNI run for real."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class TestCertificates:
    ca_file: Path
    cert_file: Path
    key_file: Path

    def server_context(self, seen_server_names: list[str | None]) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)

        def remember(sock: ssl.SSLObject, server_name: str | None, ctx: ssl.SSLContext) -> None:
            seen_server_names.append(server_name)

        context.sni_callback = remember
        return context


@dataclass(frozen=True)
class TestCA:
    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate
    ca_file: Path


def make_ca(folder: Path, name: str = "poppy-tui test CA") -> TestCA:
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    ca_file = folder / "ca.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return TestCA(ca_key, ca, ca_file)


def issue(
    ca: TestCA,
    folder: Path,
    names: list[str],
    *,
    expired: bool = False,
    ip: str | None = "127.0.0.1",
) -> TestCertificates:
    """A server certificate from `ca` for DNS `names` (and `ip`), valid now unless `expired`."""
    now = datetime.datetime.now(datetime.UTC)
    start, end = (
        (now - datetime.timedelta(days=3), now - datetime.timedelta(days=1))
        if expired
        else (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=1))
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alternative: list[x509.GeneralName] = [x509.DNSName(name) for name in names]
    if ip is not None:
        alternative.append(x509.IPAddress(ipaddress.ip_address(ip)))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName(alternative), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False
        )
        .sign(ca.key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return TestCertificates(ca.ca_file, cert_file, key_file)


def make_certificates(folder: Path, hostname: str = "localhost") -> TestCertificates:
    """A new CA and a certificate from it for `hostname` and 127.0.0.1."""
    return issue(make_ca(folder), folder, [hostname])
