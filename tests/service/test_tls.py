"""TLS and mutual TLS handshakes with certificates made in the test (``openssl`` command), and
the optional Prometheus metrics endpoint."""

from __future__ import annotations

import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest

from hortus.clients import AdvisorClient, AdvisorError, TlsConfig
from hortus.server import ServerConfig, ServerTls, build_server
from servers import Servers

GAME = "botanik"

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """A CA, a server certificate for 127.0.0.1/localhost and a client certificate."""
    d = tmp_path_factory.mktemp("pki")
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=hortus test CA",
        cwd=d,
    )
    (d / "server.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    (d / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    for name in ("server", "client"):
        _openssl(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            f"{name}.key",
            "-out",
            f"{name}.csr",
            "-subj",
            f"/CN=hortus {name}",
            cwd=d,
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            f"{name}.pem",
            "-days",
            "2",
            "-extfile",
            f"{name}.ext",
            cwd=d,
        )
    # a second CA the server does not trust, for a rejected client
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "rogue.key",
        "-out",
        "rogue.pem",
        "-days",
        "2",
        "-subj",
        "/CN=rogue",
        cwd=d,
    )
    return {p.name: p.read_bytes() for p in d.iterdir() if p.suffix in (".pem", ".key")}


def test_tls(pki: dict[str, bytes], serve: Servers) -> None:
    server = serve(ServerConfig(), tls=ServerTls(pki["server.pem"], pki["server.key"]))
    target = f"127.0.0.1:{server.port}"
    with AdvisorClient(target, timeout=10, tls=TlsConfig(root_certificates=pki["ca.pem"])) as client:
        assert client.new_game(GAME, seed=1).position.encoded
    # a client that does not trust the server's CA fails the handshake
    with AdvisorClient(target, timeout=5, tls=TlsConfig(root_certificates=pki["rogue.pem"])) as client:
        with pytest.raises(AdvisorError):
            client.get_version()
    # plaintext to a TLS port fails
    with AdvisorClient(target, timeout=5) as client:
        with pytest.raises(AdvisorError):
            client.get_version()


def test_mutual_tls(pki: dict[str, bytes], serve: Servers) -> None:
    tls = ServerTls(pki["server.pem"], pki["server.key"], client_ca=pki["ca.pem"])
    server = serve(ServerConfig(), tls=tls)
    target = f"127.0.0.1:{server.port}"
    good = TlsConfig(pki["ca.pem"], private_key=pki["client.key"], certificate_chain=pki["client.pem"])
    with AdvisorClient(target, timeout=10, tls=good) as client:
        assert client.get_version().protocol == "hortus.v1"
    # no client certificate: refused
    with AdvisorClient(target, timeout=5, tls=TlsConfig(pki["ca.pem"])) as client:
        with pytest.raises(AdvisorError):
            client.get_version()
    # a client certificate from a CA the server does not trust: refused
    rogue = TlsConfig(pki["ca.pem"], private_key=pki["rogue.key"], certificate_chain=pki["rogue.pem"])
    with AdvisorClient(target, timeout=5, tls=rogue) as client:
        with pytest.raises(AdvisorError):
            client.get_version()


def test_metrics_endpoint(serve: Servers) -> None:
    pytest.importorskip("prometheus_client")
    server = serve(ServerConfig(), metrics_port=0)
    assert server.metrics_port
    with AdvisorClient(f"127.0.0.1:{server.port}", timeout=10) as client:
        position = client.new_game(GAME, seed=1).position
        client.rank_moves(position, iterations=50)
        list(client.analyze(position, iterations=100, interval_ms=0))
        with pytest.raises(AdvisorError):
            client.new_game("no such game")
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10) as response:
        text = response.read().decode()
    assert 'hortus_requests_total{code="OK",method="RankMoves"} 1.0' in text
    assert 'hortus_requests_total{code="OK",method="Analyze"} 1.0' in text
    assert 'hortus_requests_total{code="INVALID_ARGUMENT",method="NewGame"} 1.0' in text
    assert "hortus_request_seconds_bucket" in text
    assert "hortus_searches_in_flight 0.0" in text
    assert "hortus_search_iterations_total 150.0" in text


def test_hortus_serve_with_mutual_tls(pki: dict[str, bytes], tmp_path: Path) -> None:
    import http.client
    import os
    import signal
    import ssl
    import sys

    for name, data in pki.items():
        (tmp_path / name).write_bytes(data)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hortus.cli",
            "serve",
            "--address",
            "127.0.0.1:0",
            "--workers",
            "1",
            "--tls-cert",
            str(tmp_path / "server.pem"),
            "--tls-key",
            str(tmp_path / "server.key"),
            "--tls-client-ca",
            str(tmp_path / "ca.pem"),
            "--grace-seconds",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on" in line, line
        target = line.split("listening on ", 1)[1].strip()
        good = TlsConfig(pki["ca.pem"], private_key=pki["client.key"], certificate_chain=pki["client.pem"])
        with AdvisorClient(target, timeout=10, tls=good) as client:
            assert client.get_version().protocol == "hortus.v1"
        with AdvisorClient(target, timeout=5, tls=TlsConfig(pki["ca.pem"])) as client:
            with pytest.raises(AdvisorError):
                client.get_version()
        # the web port (on by default) says it is HTTPS and keeps the same client-certificate
        # rule: plaintext gets no position, a client without a certificate no call
        web = next(line for line in proc.stdout if "hortus web" in line)
        assert " on https://" in web, web
        host, port = web.rsplit("//", 1)[1].strip().rsplit(":", 1)
        new_game = ("POST", "/hortus.v1.Advisor/NewGame", '{"game":"botanik","seed":1}', {"Content-Type": "application/json"})
        context = ssl.create_default_context(cadata=pki["ca.pem"].decode())
        context.check_hostname = False
        plain = http.client.HTTPConnection(host, int(port), timeout=10)
        bare = http.client.HTTPSConnection(host, int(port), timeout=10, context=context)
        for refused in (plain, bare):
            try:
                refused.request(*new_game)
                status: int | None = refused.getresponse().status
            except (OSError, http.client.HTTPException):
                status = None  # no answer at all
            finally:
                refused.close()
            assert status != 200
        context.load_cert_chain(str(tmp_path / "client.pem"), str(tmp_path / "client.key"))
        good_web = http.client.HTTPSConnection(host, int(port), timeout=10, context=context)
        good_web.request(*new_game)
        answer = good_web.getresponse()
        assert answer.status == 200 and b"position" in answer.read()
        good_web.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_access_log_as_json_lines() -> None:
    import io
    import json
    import logging

    from hortus.server.observe import JsonFormatter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(worker=3))
    log = logging.getLogger("hortus.access")
    log.addHandler(handler)
    previous = log.level
    log.setLevel(logging.INFO)
    server = build_server("127.0.0.1:0", ServerConfig(access_log=True))
    try:
        with AdvisorClient(f"127.0.0.1:{server.port}", timeout=10) as client:
            client.get_version()
            with pytest.raises(AdvisorError):
                client.new_game("no such game")
    finally:
        server.stop(0)
        log.removeHandler(handler)
        log.setLevel(previous)
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    by_method = {r["method"]: r for r in records}
    assert by_method["GetVersion"]["code"] == "OK" and by_method["GetVersion"]["worker"] == 3
    assert by_method["NewGame"]["code"] == "INVALID_ARGUMENT"
    assert all(r["logger"] == "hortus.access" and r["ms"] >= 0 and r["peer"] for r in records)


# --- TLS errors say what is wrong ----------------------------------------------------------
def test_a_key_that_does_not_match_the_certificate_is_named(pki: dict[str, bytes], tmp_path: Path) -> None:
    import sys

    swapped = ServerTls(pki["server.key"], pki["server.pem"])
    other_key = ServerTls(pki["server.pem"], pki["client.key"])
    for tls in (swapped, other_key):
        with pytest.raises(ValueError, match="the key does not match the certificate"):
            build_server("127.0.0.1:0", ServerConfig(), tls=tls)
    with pytest.raises(ValueError, match="client CA"):
        build_server("127.0.0.1:0", ServerConfig(), tls=ServerTls(pki["server.pem"], pki["server.key"], b"not a CA"))
    for name in ("server.pem", "server.key"):
        (tmp_path / name).write_bytes(pki[name])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hortus.cli",
            "serve",
            "--address",
            "127.0.0.1:0",
            "--workers",
            "2",
            "--tls-cert",
            str(tmp_path / "server.key"),
            "--tls-key",
            str(tmp_path / "server.pem"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "the key does not match the certificate" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_client_without_a_certificate_against_mutual_tls_fails_fast_saying_why(pki: dict[str, bytes], serve: Servers) -> None:
    """gRPC reports the refused handshake as an unreachable server ("Socket closed"), and with
    wait-for-ready would wait until the deadline: the client says what is wrong, at once."""
    import time

    tls = ServerTls(pki["server.pem"], pki["server.key"], client_ca=pki["ca.pem"])
    server = serve(ServerConfig(), tls=tls)
    target = f"127.0.0.1:{server.port}"
    for wait_for_ready in (False, True):
        with AdvisorClient(target, timeout=60, tls=TlsConfig(pki["ca.pem"]), wait_for_ready=wait_for_ready) as client:
            started = time.monotonic()
            with pytest.raises(AdvisorError, match="requires a client certificate") as info:
                client.get_version()
            assert time.monotonic() - started < 30  # long before the 60 s deadline
            assert info.value.code.name == "UNAVAILABLE"
    good = TlsConfig(pki["ca.pem"], private_key=pki["client.key"], certificate_chain=pki["client.pem"])
    with AdvisorClient(target, timeout=30, tls=good, wait_for_ready=True) as client:
        assert client.get_version().protocol == "hortus.v1"


def test_the_async_client_says_why_too(pki: dict[str, bytes], serve: Servers) -> None:
    """The asyncio client runs the same calls: its refused handshake is named as well, with
    and without wait-for-ready, and a good certificate gets through."""
    import asyncio

    from hortus.clients import AsyncAdvisorClient

    tls = ServerTls(pki["server.pem"], pki["server.key"], client_ca=pki["ca.pem"])
    server = serve(ServerConfig(), tls=tls)
    target = f"127.0.0.1:{server.port}"

    async def refused(wait_for_ready: bool) -> AdvisorError:
        async with AsyncAdvisorClient(target, timeout=60, tls=TlsConfig(pki["ca.pem"]), wait_for_ready=wait_for_ready) as client:
            try:
                await client.get_version()
            except AdvisorError as error:
                return error
        raise AssertionError("a client without a certificate got through")

    async def accepted() -> str:
        good = TlsConfig(pki["ca.pem"], private_key=pki["client.key"], certificate_chain=pki["client.pem"])
        async with AsyncAdvisorClient(target, timeout=30, tls=good, wait_for_ready=True) as client:
            return (await client.get_version()).protocol

    for wait_for_ready in (False, True):
        error = asyncio.run(asyncio.wait_for(refused(wait_for_ready), 45))  # the deadline is 60 s
        assert "requires a client certificate" in error.message and error.code.name == "UNAVAILABLE"
    assert asyncio.run(accepted()) == "hortus.v1"
