"""Build script: the explicit list of Cython extensions and the protobuf stubs.

Metadata lives in pyproject.toml. This file does the two things metadata cannot:

* generates ``hortus.v1`` (messages, gRPC stubs and ``.pyi``) from ``proto/hortus/v1/*.proto``
  into ``build/generated`` before setuptools looks for packages, so stubs are never committed,
  and beside them ``advisor_connect.py``, the Connect/gRPC-Web stubs of the ``web`` extra
  (``protoc-gen-connectrpc``, a build requirement; importing them needs ``hortus[web]``),
  and ``openapi.json``, the OpenAPI 3.1 description of the web port (``server/openapi.py`` run
  over the descriptor set of ``advisor.proto``), shipped in the package;
* compiles the Cython extensions. The source folders (``_ext/``, ``games/``...) are mapped into
  the ``hortus.*`` namespace with ``package_dir``; Cython resolves ``cimport hortus._ext.kernel``
  by package path, so a build-time include folder of symbolic links exposes the mapped folders
  under ``hortus/``. Both work the same in normal and editable installs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import Extension, setup

ROOT = Path(__file__).parent.resolve()
GENERATED = ROOT / "build" / "generated"
CYTHON_INCLUDE = ROOT / "build" / "cython_include"

# Source folder -> package. Game folders are discovered so that a new game is a new folder.
PACKAGE_DIRS: dict[str, str] = {
    "hortus": "src/hortus",
    "hortus.v1": "build/generated/hortus/v1",
    "hortus._ext": "_ext",
    "hortus.games": "games",
    "hortus.search": "search",
    "hortus.server": "server",
    "hortus.clients": "clients",
    "hortus.cli": "cli",
    "hortus.training": "training",
    "hortus.distributed": "distributed",
    "hortus.balance": "balance",
    # the web page's built assets (web/ -> esbuild), data only: a package of its own so that
    # setuptools ships them without "importable package absent from packages" warnings
    "hortus.static": "src/hortus/static",
}
for game_dir in sorted((ROOT / "games").iterdir()):
    if (game_dir / "__init__.py").exists():
        PACKAGE_DIRS[f"hortus.games.{game_dir.name}"] = f"games/{game_dir.name}"


def generate_protos() -> None:
    """Run grpc_tools.protoc over proto/hortus/v1 into build/generated (with .pyi stubs)."""
    from grpc_tools import protoc
    import grpc_tools

    out = GENERATED / "hortus" / "v1"
    out.mkdir(parents=True, exist_ok=True)
    protos = sorted(str(p.relative_to(ROOT / "proto")) for p in (ROOT / "proto").rglob("*.proto"))
    well_known = str(Path(grpc_tools.__file__).parent / "_proto")
    args = [
        "grpc_tools.protoc",
        f"-I{ROOT / 'proto'}",
        f"-I{well_known}",
        f"--python_out={GENERATED}",
        f"--pyi_out={GENERATED}",
        f"--grpc_python_out={GENERATED}",
        *protos,
    ]
    if protoc.main(args) != 0:
        sys.exit("protoc failed for " + " ".join(protos))
    generate_connect_stubs(well_known, protos)
    generate_openapi(well_known)
    (out / "__init__.py").write_text('"""Generated from proto/hortus/v1 at build time."""\n')
    (out / "py.typed").write_text("")


def generate_connect_stubs(well_known: str, protos: list[str]) -> None:
    """``hortus/v1/advisor_connect.py`` for the web front door (``hortus.server.web``).

    The plugin (protoc-gen-connectrpc, pinned in pyproject's build requirements) runs through
    this interpreter, so no console script has to be on PATH. ``protobuf=google`` keeps Google's
    protobuf runtime, the messages of the grpcio stubs. Guarded: a build without the plugin
    (``--no-build-isolation`` in an environment without it) still builds; the web front door
    then says how to get the stubs."""
    import importlib.util

    from grpc_tools import protoc

    stale = GENERATED / "hortus" / "v1" / "advisor_connect.py"
    if importlib.util.find_spec("protoc_gen_connectrpc") is None:
        stale.unlink(missing_ok=True)
        print("hortus: protoc-gen-connectrpc is not installed: no Connect stubs (the web extra needs them)", file=sys.stderr)
        return
    plugin = ROOT / "build" / "protoc-gen-connectrpc"
    plugin.parent.mkdir(parents=True, exist_ok=True)
    plugin.write_text(f"#!{sys.executable}\nfrom protoc_gen_connectrpc import main\nmain()\n")
    plugin.chmod(0o755)
    services = [p for p in protos if p.endswith("advisor.proto")]
    args = [
        "grpc_tools.protoc",
        f"-I{ROOT / 'proto'}",
        f"-I{well_known}",
        f"--plugin=protoc-gen-connectrpc={plugin}",
        f"--connectrpc_out=protobuf=google:{GENERATED}",
        *services,
    ]
    if protoc.main(args) != 0:
        sys.exit("protoc-gen-connectrpc failed for " + " ".join(services))


def generate_openapi(well_known: str) -> None:
    """``hortus/v1/openapi.json``: ``server/openapi.py`` over the descriptors of
    ``advisor.proto`` as ``protoc`` sees them. The generated ``hortus.v1`` is not importable
    while building, so the descriptors come from a descriptor set loaded into a pool of its own
    (protobuf is here: grpcio-tools needs it)."""
    import importlib.util

    from google.protobuf import descriptor_pb2, descriptor_pool
    from grpc_tools import protoc

    descriptor_set = ROOT / "build" / "advisor.descriptors"
    args = [
        "grpc_tools.protoc",
        f"-I{ROOT / 'proto'}",
        f"-I{well_known}",
        "--include_imports",
        f"--descriptor_set_out={descriptor_set}",
        "hortus/v1/advisor.proto",
    ]
    if protoc.main(args) != 0:
        sys.exit("protoc failed to write the descriptor set of hortus/v1/advisor.proto")
    files = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:  # --include_imports lists every file after the ones it imports
        pool.Add(file)
    spec = importlib.util.spec_from_file_location("hortus_build_openapi", ROOT / "server" / "openapi.py")
    assert spec is not None and spec.loader is not None
    openapi = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(openapi)
    document = openapi.openapi_document(pool.FindServiceByName("hortus.v1.Advisor"))
    (GENERATED / "hortus" / "v1" / openapi.SHIPPED).write_bytes(openapi.document_json(document))


def make_cython_include() -> None:
    """build/cython_include/hortus/ mirrors the package with symbolic links to the mapped
    folders: Cython resolves ``cimport hortus._ext.kernel`` there, and mypy type-checks the
    package there (``MYPYPATH=build/cython_include mypy -p hortus.search``)."""
    pkg = CYTHON_INCLUDE / "hortus"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.pxd").write_text("")
    links = {name: ROOT / "src" / "hortus" / name for name in ("__init__.py", "py.typed", "views.py")}
    for package, folder in PACKAGE_DIRS.items():
        if package.count(".") == 1:
            links[package.split(".")[1]] = ROOT / folder
    for name, target in links.items():
        link = pkg / name
        if link.is_symlink() or link.exists():
            if link.resolve() == target.resolve():
                continue
            link.unlink()
        os.symlink(os.path.relpath(target, pkg), link)


def use_clang() -> None:
    """Compile and link with clang: libFuzzer's instrumentation (``-fsanitize=fuzzer-no-link``)
    and the ASan runtime atheris ships are clang's; gcc's ASan is incompatible with them.
    setuptools reads CC and LDSHARED when it builds, so setting them here is enough; an
    explicit CC/LDSHARED in the environment wins."""
    import shlex
    import sysconfig

    os.environ.setdefault("CC", "clang")
    ldshared = shlex.split(sysconfig.get_config_var("LDSHARED") or "cc -shared")
    os.environ.setdefault("LDSHARED", shlex.join([os.environ["CC"], *ldshared[1:]]))


def extensions() -> list[Extension]:
    from Cython.Build import cythonize

    # HORTUS_DEBUG=1: bounds-checked Cython and gcc's AddressSanitizer (run under
    # LD_PRELOAD=libasan.so). HORTUS_DEBUG=fuzz: the same built with clang and libFuzzer's
    # coverage instrumentation, for tests/fuzz/run_asan_fuzz.sh (docs/service/operations.md, "Reliability").
    mode = os.environ.get("HORTUS_DEBUG", "")
    debug = mode in ("1", "fuzz")
    if mode == "fuzz":
        use_clang()
        sanitizers = "-fsanitize=address,fuzzer-no-link"
    else:
        sanitizers = "-fsanitize=address"
    flags = ["-O1", "-g", sanitizers, "-fno-omit-frame-pointer"] if debug else ["-O3", "-fno-strict-aliasing"]
    # The runtime is preloaded into the interpreter, as ASan must come first: gcc's libasan.so,
    # or atheris's asan_with_fuzzer.so, which also carries libFuzzer (clang leaves both
    # undefined in a shared object, so the fuzz build imports only under that preload).
    link_flags = [sanitizers] if debug else []
    sources = {
        "hortus._ext.engine": "_ext/engine.pyx",
        "hortus._ext.mcts": "_ext/mcts.pyx",
    }
    for package, folder in PACKAGE_DIRS.items():
        kernel = ROOT / folder / "kernel.pyx"
        if package.startswith("hortus.games.") and kernel.exists():
            sources[f"{package}.kernel"] = f"{folder}/kernel.pyx"
    # HORTUS_EXTENSIONS=name,name builds only those (a developer iterating on one kernel).
    only = {n for n in os.environ.get("HORTUS_EXTENSIONS", "").split(",") if n}
    exts = [
        Extension(name, [src], extra_compile_args=flags, extra_link_args=link_flags)
        for name, src in sources.items()
        if not only or name in only
    ]
    return cythonize(
        exts,
        include_path=[str(CYTHON_INCLUDE)],
        language_level=3,
        compiler_directives={
            "boundscheck": debug,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
            "embedsignature": True,
        },
        annotate=False,
        force=debug,
    )


generate_protos()
make_cython_include()

setup(
    packages=list(PACKAGE_DIRS),
    package_dir=PACKAGE_DIRS,
    package_data={
        "hortus": ["py.typed"],
        # the web page served at / of the web port (hortus.server.web)
        "hortus.static": ["*"],
        # openapi.json: the web port's OpenAPI document, made at build time (generate_openapi)
        "hortus.v1": ["*.pyi", "py.typed", "openapi.json"],
        "hortus._ext": ["*.pxd", "*.pxi", "*.pyi"],
        "hortus.games": ["*.pxd"],
        **{p: ["*.pxd", "*.pxi", "*.pyi", "*.toml", "value_model.json"] for p in PACKAGE_DIRS if p.startswith("hortus.games.")},
        "hortus.search": ["py.typed", "*.json"],
        "hortus.server": ["py.typed"],
        "hortus.clients": ["py.typed"],
        "hortus.cli": ["py.typed"],
        "hortus.training": ["py.typed"],
        "hortus.distributed": ["py.typed"],
        "hortus.balance": ["py.typed"],
    },
    ext_modules=extensions(),
    zip_safe=False,
)
