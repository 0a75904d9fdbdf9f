"""Building and running the gRPC server: the Advisor servicer, the standard health service and
server reflection, with the configured pool, message limits and graceful shutdown."""

from __future__ import annotations

import signal
import sys
import threading
import time
from concurrent import futures
from dataclasses import dataclass
from types import FrameType
from typing import Any, Callable, TextIO

import logging

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from hortus.server.admission import AdmissionControl
from hortus.server.config import ServerConfig
from hortus.server.errors import MalformedRequestGuard
from hortus.server.observe import ObservingInterceptor, access_logger
from hortus.server.service import SERVICE_NAME, AdvisorServicer
from hortus.v1 import advisor_pb2_grpc

__all__ = ["DEFAULT_ADDRESS", "RunningServer", "ServerTls", "build_server", "create_server", "serve"]

_log = logging.getLogger("hortus.server")

DEFAULT_ADDRESS = "127.0.0.1:50051"
LAME_DUCK_SECONDS = 0.5
"""On shutdown, new calls are answered UNAVAILABLE at least this long before gRPC stops (see
stop)."""
FLOOD_FACTOR = 4
"""gRPC's own call cap is this many times the calls admission control admits (work and
probes): only a flood of calls reaches it, and then gRPC refuses every call, probes too."""


@dataclass(frozen=True)
class ServerTls:
    """TLS of the listening port (PEM bytes): the server's certificate chain and key, and for
    mutual TLS the CA whose certificates clients must present (``client_ca``)."""

    certificate_chain: bytes
    private_key: bytes
    client_ca: bytes | None = None

    def check(self) -> None:
        """ValueError saying what is wrong with the PEM data: a certificate that is not one
        (the key given as the certificate, say), a key that is not one, a key that does not
        match the certificate, a client CA that is not a certificate. gRPC says only "Failed to
        bind to address" for all of these, so they are checked with Python's ``ssl`` first."""
        import os
        import ssl
        import tempfile

        key_as_cert = b"PRIVATE KEY-----" in self.certificate_chain and b"CERTIFICATE-----" not in self.certificate_chain
        cert_as_key = b"CERTIFICATE-----" in self.private_key and b"PRIVATE KEY-----" not in self.private_key
        if key_as_cert or cert_as_key:
            raise ValueError(
                "the key does not match the certificate: the certificate chain holds a private key or the "
                "private key a certificate (certificate and key swapped?)"
            )
        if b"CERTIFICATE-----" not in self.certificate_chain:
            raise ValueError("the certificate chain is not a PEM certificate (-----BEGIN CERTIFICATE-----)")
        if b"PRIVATE KEY-----" not in self.private_key:
            raise ValueError("the private key is not a PEM private key (-----BEGIN ... PRIVATE KEY-----)")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with tempfile.TemporaryDirectory(prefix="hortus-tls-") as folder:  # load_cert_chain reads files
            cert_path = os.path.join(folder, "cert.pem")
            key_path = os.path.join(folder, "key.pem")
            for path, data in ((cert_path, self.certificate_chain), (key_path, self.private_key)):
                with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
                    out.write(data)
            try:
                context.load_cert_chain(cert_path, key_path)
            except ssl.SSLError as exc:
                reason = str(getattr(exc, "reason", "") or exc)
                if "KEY_VALUES_MISMATCH" in reason.upper() or "key values mismatch" in str(exc):
                    raise ValueError("the key does not match the certificate") from exc
                raise ValueError(f"the certificate or its key cannot be loaded: {exc}") from exc
        if self.client_ca is not None:
            try:
                context.load_verify_locations(cadata=self.client_ca.decode("ascii", "replace"))
            except (ssl.SSLError, ValueError) as exc:
                raise ValueError(f"the client CA is not a PEM certificate: {exc}") from exc

    def ssl_context(self) -> Any:
        """An ``ssl.SSLContext`` of the same certificate, key and client-certificate rule, for
        the web port: the web port must not be a plaintext way around the gRPC port's TLS."""
        import os
        import ssl
        import tempfile

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        with tempfile.TemporaryDirectory(prefix="hortus-tls-") as folder:  # load_cert_chain reads files
            cert_path = os.path.join(folder, "cert.pem")
            key_path = os.path.join(folder, "key.pem")
            for path, data in ((cert_path, self.certificate_chain), (key_path, self.private_key)):
                with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
                    out.write(data)
            context.load_cert_chain(cert_path, key_path)
        if self.client_ca is not None:
            context.load_verify_locations(cadata=self.client_ca.decode("ascii", "replace"))
            context.verify_mode = ssl.CERT_REQUIRED  # mutual TLS, as require_client_auth on gRPC
        return context

    def credentials(self) -> grpc.ServerCredentials:
        return grpc.ssl_server_credentials(
            [(self.private_key, self.certificate_chain)],
            root_certificates=self.client_ca,
            require_client_auth=self.client_ca is not None,
        )


@dataclass(frozen=True)
class RunningServer:
    """A started server, its bound port and the services it hosts."""

    server: grpc.Server
    port: int
    address: str
    servicer: AdvisorServicer
    health: health.HealthServicer
    metrics_port: int | None = None
    """The port of the Prometheus ``/metrics`` endpoint, if any."""
    metrics_server: Any = None
    admission: AdmissionControl | None = None
    """Counts the calls in flight (probes never refused for load), refuses new ones while
    draining."""
    web: Any = None
    """The web front door (``hortus.server.web.WebServer``: Connect and gRPC-Web), if any."""

    def stop(self, grace: float | None = None) -> None:
        """Report NOT_SERVING, then stop; in-flight calls get `grace` seconds (None: the
        config's grace period) before they are cancelled.

        The grace period is a lame-duck phase: the server still takes calls but answers new
        ones UNAVAILABLE (clients retry elsewhere; a health check answers NOT_SERVING) until
        the calls in flight are done, at least ``LAME_DUCK_SECONDS`` (at most the grace
        period), so that calls racing with the shutdown get an answer too. gRPC itself is
        stopped only then: a stopping gRPC server cancels calls that arrive before a handler
        took them (clients saw CANCELLED when it stopped as the grace period began)."""
        started = time.monotonic()
        self.health.enter_graceful_shutdown()
        self.servicer.draining.set()
        period = self.servicer.config.grace_seconds if grace is None else grace
        lame_duck = min(LAME_DUCK_SECONDS, period)
        if lame_duck > 0:
            time.sleep(lame_duck)
        if self.admission is not None:
            self.admission.wait_idle(max(0.0, period - (time.monotonic() - started)))
        if self.web is not None:
            self.web.begin_stop()  # drains beside gRPC: both get the rest of the grace period
        remaining = max(0.0, period - (time.monotonic() - started))
        self.server.stop(remaining).wait()
        if self.web is not None:
            self.web.stop(remaining + 1.0)
        self.servicer.close()
        if self.metrics_server is not None:
            self.metrics_server.shutdown()
            self.metrics_server.server_close()


def _host(address: str) -> str:
    host, sep, _ = address.rpartition(":")
    return host if sep else address


def build_server(
    address: str = DEFAULT_ADDRESS,
    config: ServerConfig | None = None,
    *,
    tls: ServerTls | None = None,
    metrics_port: int | None = None,
    web: Any = None,
) -> RunningServer:
    """Bind `address` (port 0: any free port) and start serving Advisor, health and reflection;
    with `tls` on a TLS port (mutual TLS when it has a client CA); with `metrics_port` (needs
    ``prometheus_client``) a Prometheus endpoint on that port (0: any free port); with `web`
    (``hortus.server.web.WebOptions``, needs ``hortus[web]``) the Connect/gRPC-Web front door
    around the same servicer."""
    config = config if config is not None else ServerConfig()
    if tls is not None:
        tls.check()  # before anything starts: say what is wrong with the certificate and key
    servicer = AdvisorServicer(config)
    admission = AdmissionControl(config.rpc_limit, servicer.draining, config.retry_after_ms / 1000.0)
    # a thread for every call admitted (so a probe never waits for one), never fewer than
    # the configured pool
    pool = futures.ThreadPoolExecutor(max_workers=max(config.pool_size, admission.threads), thread_name_prefix="hortus-rpc")
    observer = ObservingInterceptor()
    if config.access_log:
        observer.observers.append(access_logger())
    metrics: Any = None
    if metrics_port is not None:
        from hortus.server.metrics import start_metrics  # lazy: prometheus_client is optional

        metrics = start_metrics(metrics_port, servicer)
        observer.observers.append(metrics.observe_call)
    server = grpc.server(
        pool,
        options=config.grpc_options(),
        # the observer outermost, so that refused calls are counted too; admission before the
        # parsing guard, so that a draining server refuses even malformed calls UNAVAILABLE
        interceptors=([observer] if observer.observers else []) + [admission, MalformedRequestGuard()],
        # admission control is ours (probes exempt); gRPC's cap only bounds a flood
        maximum_concurrent_rpcs=FLOOD_FACTOR * admission.threads,
    )

    advisor_pb2_grpc.add_AdvisorServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]

    health_servicer = health.HealthServicer(experimental_non_blocking=True)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)

    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME),
        server,
    )
    try:
        port = server.add_secure_port(address, tls.credentials()) if tls else server.add_insecure_port(address)
    except RuntimeError as exc:  # grpc raises when it cannot bind
        raise OSError(f"cannot listen on {address}: {exc}") from exc
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    if servicer.routes is not None:
        # the worker group's private socket: continuations the other workers route here
        # (hortus.server.routing); in a folder only the server's user can reach
        if not server.add_insecure_port(servicer.routes.address(servicer.routes.index)):
            raise OSError(f"cannot listen on {servicer.routes.address(servicer.routes.index)}")
    server.start()
    web_server = None
    if web is not None:
        from dataclasses import replace

        from hortus.server.web import start_web  # lazy: the web extra is optional

        web = replace(web, reuse_port=config.reuse_port, grace_seconds=config.grace_seconds, observers=observer.observers)
        if tls is not None and not web.plaintext:
            web = replace(web, tls=tls)  # the web port serves HTTPS with the gRPC port's certificate
        elif tls is not None:
            _log.warning(
                "the web port %s serves plaintext HTTP beside a TLS gRPC port (--web-plaintext): "
                "anyone on the network can read and send its calls",
                web.address,
            )
        try:
            web_server = start_web(servicer, web, admission)  # one admission control for both ports
        except BaseException:
            server.stop(None)
            raise
    return RunningServer(
        server,
        port,
        f"{_host(address)}:{port}",
        servicer,
        health_servicer,
        metrics.port if metrics is not None else None,
        metrics.http_server if metrics is not None else None,
        admission,
        web_server,
    )


def create_server(address: str = "127.0.0.1:0", config: ServerConfig | None = None) -> tuple[grpc.Server, int]:
    """A started server bound to `address` (port 0: a free port) and the port it got.

    Stop it with ``server.stop(grace)``.
    """
    running = build_server(address, config)
    return running.server, running.port


# glibc mallopt() parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
MALLOC_ARENAS = 2
MMAP_THRESHOLD_BYTES = 128 * 1024
"""glibc's own initial threshold. Fixing it (any explicit value does) turns off glibc's dynamic
threshold, so other large blocks (batch buffers, protobuf messages) keep getting mappings of
their own after a larger one was freed. (Node arenas no longer depend on it: they map
themselves, _ext/memory.pxd.)"""
TRIM_THRESHOLD_BYTES = 128 * 1024
"""glibc's own initial trim threshold: free space at the top of the heap beyond it goes back to
the system."""


def tune_malloc(
    arenas: int = MALLOC_ARENAS, mmap_threshold: int = MMAP_THRESHOLD_BYTES, trim_threshold: int = TRIM_THRESHOLD_BYTES
) -> dict[str, bool]:
    """Tune glibc's malloc for a long-running server; returns which settings were applied.

    * At most `arenas` malloc arenas (as ``MALLOC_ARENA_MAX``): with one arena per gRPC thread
      the free space left in each one adds up.
    * A fixed mmap threshold (as ``MALLOC_MMAP_THRESHOLD_``): blocks of `mmap_threshold` bytes
      and more get their own mapping, returned to the system by ``free``. Left dynamic, glibc
      raises the threshold to the size of every mapped block freed, up to 32 MiB, so after
      one large block later ones are carved out of the heap between gRPC's and Python's small
      blocks, and the holes they leave are not given back.
    * A fixed trim threshold (as ``MALLOC_TRIM_THRESHOLD_``), then one ``malloc_trim``: glibc
      serves a large block from the free top of the heap before it considers a mapping, and
      every mapped block freed before this call (while importing, say) raised the trim
      threshold to twice its size, so the top could keep hundreds of KB free. Trimmed, and
      held at 128 KiB, the top stays small. Neither threshold can rule out a large block in
      the heap (glibc maps one only when no free chunk and not the top can hold it), which is
      why node arenas map themselves (``_ext/memory.pxd``).

    The effect on memory over a load run: docs/service/operations.md (Reliability). A setting
    already made through its environment variable is left alone, and
    ``HORTUS_MALLOC_TUNING=off`` leaves glibc's defaults entirely (to compare, or under another
    allocator). No effect elsewhere than glibc."""
    import ctypes
    import os

    applied = {"arena_max": False, "mmap_threshold": False, "trim_threshold": False}
    if os.environ.get("HORTUS_MALLOC_TUNING", "").lower() in ("off", "0", "no"):
        return applied
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt, malloc_trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        return applied
    if "MALLOC_ARENA_MAX" not in os.environ:
        applied["arena_max"] = bool(mallopt(M_ARENA_MAX, arenas))
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        applied["mmap_threshold"] = bool(mallopt(M_MMAP_THRESHOLD, mmap_threshold))
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        applied["trim_threshold"] = bool(mallopt(M_TRIM_THRESHOLD, trim_threshold))
        malloc_trim(0)  # give back the top kept under the old threshold: the next free may be far off
    return applied


def serve(
    address: str = DEFAULT_ADDRESS,
    config: ServerConfig | None = None,
    *,
    out: TextIO | None = None,
    ready: Callable[[RunningServer], None] | None = None,
    stop_event: threading.Event | None = None,
    tls: ServerTls | None = None,
    metrics_port: int | None = None,
    web: Any = None,
) -> int:
    """Serve until SIGTERM or SIGINT, then shut down gracefully. Returns 0.

    `ready` (if given) is called once the server listens, e.g. to record the port;
    setting `stop_event` (if given) stops the server like a signal does. Signal handlers are
    installed only when called from the main thread.
    """
    out = out if out is not None else sys.stdout
    tune_malloc()
    running = build_server(address, config, tls=tls, metrics_port=metrics_port, web=web)
    stop = stop_event if stop_event is not None else threading.Event()
    previous: dict[signal.Signals, object] = {}

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, on_signal)
    print(f"hortus advisor listening on {running.address}", file=out, flush=True)
    if running.web is not None:
        print(f"hortus web (Connect, gRPC-Web) on {running.web.scheme}://{running.web.address}", file=out, flush=True)
        from hortus.server.web import origins_line  # lazy: the web extra is optional

        print(origins_line(running.web.app.cors_origins), file=out, flush=True)
    try:
        if ready is not None:
            ready(running)
        while not stop.wait(0.5):
            pass
    finally:
        grace = running.servicer.config.grace_seconds
        print(f"hortus advisor shutting down (grace {grace:g} s)", file=out, flush=True)
        running.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
    return 0
