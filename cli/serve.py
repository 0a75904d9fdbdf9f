"""``hortus serve``: the gRPC service and its web port, one process or a worker group."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only for annotations: the engine is imported lazily
    pass


from hortus.cli.common import (
    ENVIRONMENT_PREFIX,
    CliError,
    defaults_from_environment,
    non_negative_int,
    positive_int,
)

_CAPS = (
    ("default_iterations", int, "iterations when a request gives no budget"),
    ("max_iterations", int, "cap of SearchLimits.iterations"),
    ("max_time_ms", float, "cap of SearchLimits.time_ms (ms)"),
    ("max_threads", int, "cap of SearchLimits.threads"),
    ("max_concurrent_searches", int, "searches at once; more are RESOURCE_EXHAUSTED"),
    ("max_message_bytes", int, "largest message (bytes)"),
    ("max_actions_per_request", int, "cap of ApplyActions actions"),
    ("max_nodes", int, "tree nodes per search thread"),
    ("deadline_margin_ms", float, "stop this long before a call's deadline (ms)"),
    ("grace_seconds", float, "shutdown grace period (s)"),
    ("max_batch_size", int, "positions per EvaluatePositions call"),
    ("batch_window", int, "unanswered positions per EvaluatePositions call (0 = 2 x searches)"),
    ("min_interval_ms", float, "smallest Analyze interval_ms (ms)"),
    ("retry_after_ms", float, "retry delay suggested with RESOURCE_EXHAUSTED (ms)"),
    ("max_concurrent_rpcs", int, "calls admitted at once (0 = 4 x gRPC threads); more are RESOURCE_EXHAUSTED"),
    ("cache_bytes", int, "memory of the cache of deterministic answers (bytes, 0 = off; default 64 MiB)"),
    ("continue_trees", int, "Analyze trees kept for continue_from (0 = off; default 32)"),
    ("continue_bytes", int, "memory of the kept Analyze trees (bytes; default 256 MiB)"),
    ("continue_idle_s", float, "a kept Analyze tree is dropped after this long unused (s; default 300)"),
)


def _read_file(path: str | None, what: str) -> bytes | None:
    if path is None:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc


def _web_options(args: argparse.Namespace) -> Any:
    """The web front door of ``hortus serve`` (None: off). On by default at 127.0.0.1:8080 (a
    free port when --address asks for port 0, so that test servers never collide); without
    the web extra, the default quietly becomes off (a note on stderr) and an explicit
    --web-address is an error."""
    import importlib.util

    explicit = args.web_address is not None
    address = args.web_address if explicit else "127.0.0.1:8080"
    if address in ("off", "none", ""):
        return None
    if not explicit and args.address.rpartition(":")[2] == "0":
        address = "127.0.0.1:0"
    missing = [m for m in ("connectrpc", "uvicorn", "hortus.v1.advisor_connect") if importlib.util.find_spec(m) is None]
    if missing:
        if explicit or args.cors_origin or args.web_static:
            raise CliError(f"--web-address needs the web extra: pip install 'hortus[web]' (missing: {', '.join(missing)})")
        print("hortus: web front door off (pip install 'hortus[web]' to serve browsers)", file=sys.stderr)
        return None
    from hortus.server.web import WebOptions

    static = Path(args.web_static) if args.web_static else None
    if static is not None and not static.is_dir():
        raise CliError(f"--web-static {args.web_static}: not a folder")
    return WebOptions(
        address=address,
        cors_origins=tuple(args.cors_origin or ()),
        static_dir=static,
        plaintext=args.web_plaintext,
        trusted_proxies=tuple(args.trusted_proxy or ()),
    )


def _check_seal_key(path: str) -> None:
    """CliError saying what is wrong with a sealing key file (or the missing extra)."""
    import importlib.util

    if importlib.util.find_spec("cryptography") is None:
        raise CliError("--seal-key needs the cryptography package: pip install 'hortus[seal]'")
    from hortus.server.sealing import SealKeyError, load_sealer

    try:
        load_sealer(path)
    except (OSError, UnicodeDecodeError, SealKeyError) as exc:
        raise CliError(f"--seal-key {path}: {exc}") from exc


def _cmd_seal_keygen(args: argparse.Namespace) -> int:
    """Append a new sealing key to FILE (created owner-only): it seals from the next start;
    the keys before it still open what they sealed."""
    from hortus.server.sealing import SealKeyError, append_new_key

    try:
        key_id = append_new_key(args.file, args.id)
    except (OSError, UnicodeDecodeError, SealKeyError) as exc:
        raise CliError(f"{args.file}: {exc}") from exc
    print(f"hortus: key {key_id} appended to {args.file}; it seals once the servers restart with --seal-key {args.file}")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:

    from hortus.server import (  # lazy: the engine loads only here
        ServerConfig,
        ServerTls,
        serve,
    )
    from hortus.server.observe import configure_logging

    configure_logging(args.log_level, args.log_format)
    settings = {name: getattr(args, name) for name, _, _ in _CAPS if getattr(args, name) is not None}
    if args.access_log:
        settings["access_log"] = True
    if args.rpc_threads is not None:
        settings["workers"] = args.rpc_threads
    if args.seal_key:
        settings["seal_key_file"] = args.seal_key
        _check_seal_key(args.seal_key)  # before any worker starts: each reads the same file
    if args.require_sealed:
        if not args.seal_key:
            raise CliError("--require-sealed needs --seal-key FILE (make one with: hortus seal-keygen FILE)")
        settings["require_sealed"] = True
    cores = max(1, os.cpu_count() or 1)
    # Each process keeps the default max_concurrent_searches (one per core): the kernel spreads
    # connections, not calls, so one busy client may reach a single worker.
    processes = args.workers if args.workers is not None else cores
    try:
        config = ServerConfig(**settings)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    tls = None
    if args.tls_cert or args.tls_key or args.tls_client_ca:
        cert = _read_file(args.tls_cert, "--tls-cert")
        key = _read_file(args.tls_key, "--tls-key")
        if cert is None or key is None:
            raise CliError("TLS needs both --tls-cert and --tls-key")
        tls = ServerTls(cert, key, _read_file(args.tls_client_ca, "--tls-client-ca"))
        try:
            tls.check()  # say what is wrong (gRPC would only fail to bind), before any worker starts
        except ValueError as exc:
            raise CliError(f"--tls-cert/--tls-key/--tls-client-ca: {exc}") from exc
    if args.metrics_port is not None:
        try:
            import prometheus_client  # noqa: F401
        except ImportError as exc:
            raise CliError("--metrics-port needs the prometheus_client package (pip install prometheus_client)") from exc
    web = _web_options(args)
    try:
        if processes > 1:
            from hortus.server.workers import serve_workers

            status: int = serve_workers(
                args.address,
                config,
                processes,
                tls=tls,
                metrics_port=args.metrics_port,
                log_level=args.log_level,
                log_format=args.log_format,
                web=web,
            )
            return status
        return serve(args.address, config, tls=tls, metrics_port=args.metrics_port, web=web)
    except OSError as exc:  # the address cannot be bound
        raise CliError(str(exc)) from exc


# --- evaluate --------------------------------------------------------------------------------


def add_parsers(sub: Any) -> None:
    """Register serve."""
    p = sub.add_parser("serve", help="run the gRPC advisor service")
    p.add_argument("--address", default="127.0.0.1:50051", help="HOST:PORT to listen on (default %(default)s)")
    p.add_argument(
        "--workers", type=positive_int, default=None, help="server processes on the port (SO_REUSEPORT; default: cores)"
    )
    p.add_argument("--rpc-threads", type=non_negative_int, default=None, help="gRPC threads per process (0 = searches + 32)")
    for name, kind, text in _CAPS:
        p.add_argument("--" + name.replace("_", "-"), dest=name, type=kind, default=None, help=text)
    p.add_argument("--tls-cert", help="PEM certificate chain of the server (turns TLS on)")
    p.add_argument("--tls-key", help="PEM private key of the server")
    p.add_argument("--tls-client-ca", help="PEM CA of client certificates (turns mutual TLS on)")
    p.add_argument(
        "--metrics-port", type=non_negative_int, default=None, help="Prometheus /metrics port (needs prometheus_client)"
    )
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-format", default="text", choices=["text", "json"], help="log lines as text or JSON objects")
    p.add_argument("--access-log", action="store_true", help="log every call: method, code, ms, peer")
    p.add_argument(
        "--web-address",
        default=None,
        help="HOST:PORT of the browser front door, Connect and gRPC-Web (default 127.0.0.1:8080, a free "
        "port when --address has port 0; 'off' turns it off; needs hortus[web])",
    )
    p.add_argument(
        "--cors-origin",
        action="append",
        default=None,
        metavar="ORIGIN",
        help="a page origin allowed to call the web port, e.g. https://play.example (repeatable; '*' = any)",
    )
    p.add_argument(
        "--web-static", default=None, metavar="DIR", help="folder served at / of the web port (default: the bundled page)"
    )
    p.add_argument(
        "--web-plaintext",
        action="store_true",
        help="serve the web port as plaintext HTTP even with --tls-cert (a warning is logged; "
        "by default the web port serves HTTPS with the gRPC port's certificate and client-CA rule)",
    )
    p.add_argument(
        "--trusted-proxy",
        action="append",
        default=None,
        metavar="IP",
        help="a reverse proxy (IP or network) whose X-Forwarded-For the web port believes (repeatable; default none)",
    )
    p.add_argument(
        "--seal-key",
        default=None,
        metavar="FILE",
        help="sealing key file ('ID BASE64KEY' lines, the last one seals; hortus seal-keygen FILE): hand out "
        "positions sealed for one seat and open them (needs hortus[seal])",
    )
    p.add_argument(
        "--require-sealed",
        action="store_true",
        help="refuse encoded positions: only sealed ones (or a seat's structured view); needs --seal-key",
    )
    p.set_defaults(func=_cmd_serve)
    defaults_from_environment(p, ENVIRONMENT_PREFIX)

    k = sub.add_parser("seal-keygen", help="append a new sealing key to a key file (hortus serve --seal-key)")
    k.add_argument("file", help="the key file (created readable by its owner only)")
    k.add_argument("--id", default=None, help="the key's id (default: s + the UTC date and time)")
    k.set_defaults(func=_cmd_seal_keygen)
