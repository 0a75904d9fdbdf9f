"""The web port under --tls-cert/--tls-key/--tls-client-ca: HTTPS with the gRPC port's own
certificate and client-certificate rule, never a silent plaintext port beside TLS gRPC;
plaintext only when asked (``WebOptions.plaintext``, ``--web-plaintext``) and then with a
warning. Certificates are made in the test with ``cryptography``."""

from __future__ import annotations

import datetime
import http.client
import ipaddress
import json
import logging
import ssl
from pathlib import Path

import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")
x509 = pytest.importorskip("cryptography.x509")

from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402

from hortus.server import ServerConfig, ServerTls  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from servers import Servers  # noqa: E402

PATH = "/hortus.v1.Advisor/GetVersion"


def _cert(
    name: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    *,
    ca: bool = False,
    server: bool = False,
) -> x509.Certificate:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    issuer_name, issuer_key = issuer if issuer is not None else (subject, key)
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        ).add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    elif not ca:
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Files: a CA, a server certificate for 127.0.0.1/localhost, a client certificate."""
    d = tmp_path_factory.mktemp("webpki")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _cert("hortus test CA", ca_key, None, ca=True)
    files: dict[str, Path] = {}
    for name, data in (("ca.pem", ca.public_bytes(serialization.Encoding.PEM)),):
        files[name] = d / name
        files[name].write_bytes(data)
    for name, server in (("server", True), ("client", False)):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _cert(f"hortus {name}", key, (ca.subject, ca_key), server=server)
        files[f"{name}.pem"] = d / f"{name}.pem"
        files[f"{name}.pem"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        files[f"{name}.key"] = d / f"{name}.key"
        files[f"{name}.key"].write_bytes(_pem_key(key))
    return files


def _call(port: int, context: ssl.SSLContext | None) -> dict[str, object]:
    """GetVersion over Connect JSON; HTTPS when `context` is given."""
    conn: http.client.HTTPConnection
    if context is None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    else:
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
    try:
        conn.request("POST", PATH, body=b"{}", headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        body = response.read()
        assert response.status == 200, body
        answer: dict[str, object] = json.loads(body)
        return answer
    finally:
        conn.close()


def _client_context(pki: dict[str, Path], *, with_cert: bool) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki["ca.pem"]))
    if with_cert:
        context.load_cert_chain(str(pki["client.pem"]), str(pki["client.key"]))
    return context


def _tls(pki: dict[str, Path], mutual: bool) -> ServerTls:
    return ServerTls(
        pki["server.pem"].read_bytes(), pki["server.key"].read_bytes(), pki["ca.pem"].read_bytes() if mutual else None
    )


@pytest.fixture
def tls_server(pki: dict[str, Path], serve: Servers) -> int:
    server = serve(ServerConfig(), tls=_tls(pki, False), web=WebOptions("127.0.0.1:0"))
    assert server.web is not None and server.web.scheme == "https"
    return server.web.port


def test_web_port_serves_https_with_the_grpc_certificate(pki: dict[str, Path], tls_server: int) -> None:
    assert _call(tls_server, _client_context(pki, with_cert=False))["protocol"] == "hortus.v1"
    # plaintext HTTP to the TLS web port gets no answer
    with pytest.raises((http.client.HTTPException, ConnectionError, AssertionError, OSError)):
        _call(tls_server, None)


def test_web_port_keeps_the_client_certificate_rule(pki: dict[str, Path], serve: Servers) -> None:
    server = serve(ServerConfig(), tls=_tls(pki, True), web=WebOptions("127.0.0.1:0"))
    assert server.web is not None
    port = server.web.port
    assert _call(port, _client_context(pki, with_cert=True))["protocol"] == "hortus.v1"
    # no client certificate: the handshake (or the first read, under TLS 1.3) fails
    with pytest.raises((ssl.SSLError, ConnectionError, http.client.HTTPException, OSError)):
        _call(port, _client_context(pki, with_cert=False))


def test_plaintext_web_beside_tls_only_when_asked_and_with_a_warning(
    pki: dict[str, Path], serve: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="hortus.server"):
        server = serve(ServerConfig(), tls=_tls(pki, True), web=WebOptions("127.0.0.1:0", plaintext=True))
    assert server.web is not None and server.web.scheme == "http"
    assert _call(server.web.port, None)["protocol"] == "hortus.v1"
    assert any("plaintext" in r.getMessage() for r in caplog.records)
