"""mkdocs hook: a package tree griffe can read statically.

setup.py maps ``hortus.<pkg>`` onto top-level folders (``package_dir``: ``hortus.search`` =
``search/``, ...), which a static reader cannot follow. At startup this mirrors the mapped
folders under ``build/docs_include/hortus`` with symbolic links, as setup.py's
``build/cython_include`` does, so the API pages build from a fresh clone.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MAPPED = ["_ext", "games", "search", "server", "clients", "training", "distributed"]


def on_startup(**_: Any) -> None:
    pkg = ROOT / "build" / "docs_include" / "hortus"
    pkg.mkdir(parents=True, exist_ok=True)
    links = {"__init__.py": ROOT / "src" / "hortus" / "__init__.py"}
    links.update({name: ROOT / name for name in MAPPED})
    for name, target in links.items():
        link = pkg / name
        if link.is_symlink() or link.exists():
            if link.resolve() == target.resolve():
                continue
            link.unlink()
        os.symlink(os.path.relpath(target, pkg), link)


# --- the field reference, generated from the proto files -----------------------------------------
PROTO = ROOT / "proto" / "hortus" / "v1"
_FIELD = re.compile(r"^\s*(?:(repeated|optional)\s+)?([\w.]+(?:<[^>]*>)?)\s+(\w+)\s*=\s*(\d+)[^;]*;\s*(?://\s?(.*))?$")
_RPC = re.compile(r"^\s*rpc\s+(\w+)\s*\(\s*(stream\s+)?([\w.]+)\s*\)\s*returns\s*\(\s*(stream\s+)?([\w.]+)\s*\)")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").strip()


def proto_reference() -> str:
    """Markdown of every service, RPC, message and field of proto/hortus/v1, with their comments:
    read from the files themselves, so the page cannot drift from the wire contract."""
    out = [
        "# Field reference",
        "",
        "Generated at build time from `proto/hortus/v1/*.proto` (each field's comment as written",
        "there). Proto3 defaults apply to an unset field: 0, empty string, false, the first enum",
        "value. The narrative, errors and examples are on [Protocol](protocol.md).",
        "",
    ]
    for path in sorted(PROTO.glob("*.proto")):
        out += [f"## {path.name}", ""]
        comment: list[str] = []
        message: str | None = None
        rows: list[str] = []
        trailing_col = -1  # column of the previous field's trailing comment
        for raw in path.read_text().splitlines():
            line = raw.strip()
            if line.startswith("//"):
                if rows and trailing_col > 0 and raw.index("//") == trailing_col:
                    # a trailing comment continued on the next line, aligned under it
                    rows[-1] = rows[-1][: -len(" |")] + " " + _cell(line[2:]) + " |"
                else:
                    comment.append(line[2:].strip())
                continue
            trailing_col = raw.index("//") if "//" in raw and _FIELD.match(raw) else -1
            head = re.match(r"^(message|enum|service)\s+(\w+)", line)
            if head and message is None:
                out += [f"### {head.group(2)}", "", " ".join(comment), ""]
                rows = []
                if line.endswith("}"):  # one line: `message X { repeated Y y = 1; }`
                    inner = line[line.index("{") + 1 : -1]
                    for part in filter(None, (p.strip() for p in inner.split(";"))):
                        if (one := _FIELD.match(part + ";")) is not None:
                            label, ftype, fname, number, _ = one.groups()
                            rows.append(f"| `{fname}` | `{(label + ' ') if label else ''}{ftype}` | {number} | |")
                    if rows:
                        out += ["| field | type | number | notes |", "|---|---|---|---|", *rows, ""]
                    comment = []
                    continue
                message = head.group(2)
            elif (rpc := _RPC.match(line)) is not None:
                name, s_in, req, s_out, resp = rpc.groups()
                rows.append(
                    f"| `{name}` | {'stream ' if s_in else ''}[{req}](#{req.lower()}) "
                    f"| {'stream ' if s_out else ''}[{resp}](#{resp.lower()}) | {_cell(' '.join(comment))} |"
                )
            elif (field := _FIELD.match(line)) is not None and message is not None:
                label, ftype, fname, number, trailing = field.groups()
                doc = " ".join([*comment, trailing or ""])
                rows.append(f"| `{fname}` | `{(label + ' ') if label else ''}{ftype}` | {number} | {_cell(doc)} |")
            elif (enum_value := re.match(r"^(\w+)\s*=\s*(\d+);\s*(?://\s?(.*))?$", line)) and message:
                rows.append(
                    f"| `{enum_value.group(1)}` | | {enum_value.group(2)} | {_cell(' '.join([*comment, enum_value.group(3) or '']))} |"
                )
            elif line == "}" and message is not None and raw.startswith("}"):
                if rows:
                    header = (
                        "| RPC | request | response | notes |" if rows[0].count("](#") else "| field | type | number | notes |"
                    )
                    out += [header, "|---|---|---|---|", *rows, ""]
                message = None
            elif line and not line.startswith(("oneof", "}", "reserved", "option")):
                pass
            if not line.startswith("//"):
                comment = [] if not line.startswith("oneof") else comment
        out.append("")
    return "\n".join(out)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    files.append(File.generated(config, "service/fields.md", content=proto_reference()))
    return files
