"""What every subcommand shares: output, the connection to a service (or an embedded one),
argument types and argument groups."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from hortus.clients.client import AdvisorClient
from hortus.clients.errors import AdvisorError, InvalidArgumentError

if TYPE_CHECKING:  # only for annotations: the engine is imported lazily
    pass


QUIT_WORDS = frozenset({"q", "quit", "exit"})
HINT_WORDS = frozenset({"?", "hint", "hints"})


class CliError(Exception):
    """A usage problem found after parsing (bad file, bad option...): exit status 2."""


# --- output helpers --------------------------------------------------------------------------
def output_stream() -> TextIO:
    return sys.stdout


def say(*parts: object) -> None:
    print(*parts, file=output_stream(), flush=True)


def read_line(prompt: str) -> str | None:
    """One line of standard input (read line by line, so a pipe can drive a game), or None at
    end of input."""
    out = output_stream()
    out.write(prompt)
    out.flush()
    line = sys.stdin.readline()
    if not line:
        out.write("\n")
        return None
    return line.strip()


def percent(value: float) -> str:
    return f"{100.0 * value:.1f}%"


def format_scores(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.1f}" for v in values)


def print_json(data: Any) -> None:
    say(json.dumps(data, indent=2, sort_keys=False))


def normalize(text: str) -> str:
    return " ".join(text.lower().split())


# --- connection ------------------------------------------------------------------------------
@contextlib.contextmanager
def advisor(target: str | None, timeout: float | None) -> Iterator[AdvisorClient]:
    """A client of `target`, or of an embedded server on a free local port."""
    if target:
        with AdvisorClient(target, timeout) as client:
            yield client
        return
    from hortus.server import create_server  # lazy: the engine loads only when embedded

    server, port = create_server("127.0.0.1:0")
    try:
        with AdvisorClient(f"127.0.0.1:{port}", timeout) as client:
            yield client
    finally:
        server.stop(None)


def parse_options(items: Sequence[str] | None) -> dict[str, str]:
    options: dict[str, str] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CliError(f"--option expects NAME=VALUE, not {item!r}")
        options[name.strip()] = value.strip()
    return options


# --- play ------------------------------------------------------------------------------------


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not >= 0")
    return value


def non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number >= 0")
    return value


def add_connection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", help="HOST:PORT of a hortus server (default: an embedded server on a free port)")
    p.add_argument("--timeout", type=float, default=None, help="deadline of each call, in seconds")


def add_search_arguments(p: argparse.ArgumentParser) -> None:
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--iterations", type=non_negative_int, default=0, help="search iterations (0 = server default)")
    budget.add_argument("--time-ms", type=non_negative_float, default=0.0, help="search time budget in milliseconds")
    p.add_argument("--threads", type=non_negative_int, default=0, help="root-parallel search threads (0 = 1)")


def add_sharding(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sharded run (in-process; -o is then a folder)")
    g.add_argument("--shard", default=None, metavar="K/N", help="compute only shard K of N (0-based), e.g. one array job")
    g.add_argument("--shards", type=non_negative_int, default=0, help="number of shards (default: ~25 ids each)")
    g.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="run the shards as Ray tasks: on the cluster at ADDRESS ('auto' = a running one), "
        "or a local one when none is given (needs hortus[ray])",
    )
    g.add_argument("--workers", type=positive_int, default=1, help="local processes for the shards (without --shard or --ray)")


def add_game_setup(p: argparse.ArgumentParser) -> None:
    p.add_argument("--players", type=non_negative_int, default=0, help="number of seats (0 = the game's minimum)")
    p.add_argument("--variant", default=None, help="game variant")
    p.add_argument("--option", action="append", metavar="NAME=VALUE", help="rule option (repeatable)")


def report(error: AdvisorError) -> None:
    print(f"hortus: {error.code.name.lower()}: {error.message}", file=sys.stderr)
    if isinstance(error, InvalidArgumentError):
        for v in error.violations:
            print(f"  {v.field}: {v.description}", file=sys.stderr)


class Progress:
    """A progress bar on stderr: tqdm when installed, else a plain counter line."""

    def __init__(self, total: int, initial: int, enabled: bool) -> None:
        self._bar: Any = None
        self._done = initial
        self._total = total
        self._enabled = enabled
        self._last = 0.0
        if not enabled:
            return
        try:
            from tqdm import tqdm  # type: ignore[import-untyped, unused-ignore]  # optional
        except ImportError:
            return
        self._bar = tqdm(total=total, initial=initial, unit="pos", file=sys.stderr, dynamic_ncols=True)

    @property
    def done(self) -> int:
        """Positions answered so far, those of earlier runs included."""
        return self._done

    def update(self) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.update(1)
            return
        if not self._enabled:
            return
        import time

        now = time.monotonic()
        if now - self._last >= 0.5 or self._done == self._total:
            self._last = now
            print(f"\revaluated {self._done}/{self._total}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._enabled:
            print(file=sys.stderr, flush=True)
        self._enabled = False


ENVIRONMENT_PREFIX = "HORTUS_"
"""``hortus serve --max-iterations N`` can also be set as ``HORTUS_MAX_ITERATIONS=N`` (containers,
process managers); a flag on the command line wins."""

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def environment_name(option: str, prefix: str = ENVIRONMENT_PREFIX) -> str:
    """The environment variable of a long option: ``--tls-cert`` -> ``HORTUS_TLS_CERT``."""
    return prefix + option.lstrip("-").replace("-", "_").upper()


def defaults_from_environment(parser: argparse.ArgumentParser, prefix: str = ENVIRONMENT_PREFIX) -> None:
    """Every long option of `parser` takes its default from its environment variable when set
    (``environment_name``): the value is parsed as on the command line (argparse converts a
    string default with the option's type, so a bad value fails naming the option); a switch
    takes 1/true/yes/on or 0/false/no/off; a repeatable option takes a comma-separated list.
    A flag given on the command line overrides its variable."""
    for action in parser._actions:  # argparse exposes no public list of a parser's options
        longs = [o for o in action.option_strings if o.startswith("--")]
        if not longs or action.dest in ("help", "version"):
            continue
        name = environment_name(longs[0], prefix)
        action.help = (action.help or "") + f" [env {name}]"
        value = os.environ.get(name)
        if value is None:
            continue
        if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            word = value.strip().lower()
            if word not in _TRUE | _FALSE:
                raise CliError(f"{name}={value!r}: expected 1/true/yes/on or 0/false/no/off (for {longs[0]})")
            action.default = (word in _TRUE) == isinstance(action, argparse._StoreTrueAction)
        elif isinstance(action, argparse._AppendAction):
            items = [item.strip() for item in value.split(",") if item.strip()]
            action.default = [action.type(item) if callable(action.type) else item for item in items]
        else:
            action.default = value
