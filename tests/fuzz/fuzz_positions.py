"""Coverage-guided fuzzing of everything a client can send (atheris / libFuzzer).

    pip install atheris
    python tests/fuzz/fuzz_positions.py -atheris_runs=200000          # all games
    python tests/fuzz/fuzz_positions.py -max_total_time=600 corpus/   # with a corpus folder
    HORTUS_FUZZ_GAMES=botanik python tests/fuzz/fuzz_positions.py     # one game (comma list)
    tests/fuzz/run_asan_fuzz.sh 250000     # extensions built by clang with libFuzzer coverage
                                           # and AddressSanitizer, in a throwaway copy

Each input is split by its first byte into: a game, then one of
  decode(bytes) | from_view(JSON) | apply(action id) on a decoded seed position |
  parse_action(text) | the gRPC request path (servicer methods, in process).
Anything other than a valid result, InvalidPositionError, IllegalActionError (or a gRPC
INVALID_ARGUMENT for the request path) is a finding; a crash is the worst one.
For native bugs, run it through run_asan_fuzz.sh: libFuzzer then also sees the edges of the
compiled kernels, and AddressSanitizer stops at the first bad memory access in them.
"""

from __future__ import annotations

import json
import os
import random
import sys

import atheris  # type: ignore[import-untyped, unused-ignore]

with atheris.instrument_imports():
    import grpc
    from google.protobuf.message import DecodeError

    from hortus import games
    from hortus.server.config import ServerConfig
    from hortus.server.service import AdvisorServicer
    from hortus.v1 import advisor_pb2 as pb

    for _name in games.names():
        games.get(_name)  # import (and so instrument) every game's Python face

# HORTUS_FUZZ_GAMES=a,b fuzzes only those games: one libFuzzer run per game keeps each corpus
# and coverage figure about one kernel.
NAMES = [n for n in os.environ.get("HORTUS_FUZZ_GAMES", "").split(",") if n] or games.names()
if unknown := set(NAMES) - set(games.names()):
    sys.exit(f"HORTUS_FUZZ_GAMES: unknown game(s) {sorted(unknown)}; known: {games.names()}")
SEEDS: dict[str, list[bytes]] = {}


def seed_positions(name: str) -> list[bytes]:
    """Real positions of a game to mutate around: for every seat count, decision positions
    spread over one seeded random game, from the opening to its last decision (so that the
    mid-game and end-game rules, the final scoring and every seat count are reached too)."""
    if name not in SEEDS:
        game = games.get(name)
        out: list[bytes] = []
        for players in range(game.min_players, game.max_players + 1):
            rng = random.Random(players)
            state = game.new_game(players=players, seed=players)
            decisions: list[bytes] = []
            while not state.is_terminal():
                if state.is_chance():
                    state.resolve_chance(rng)
                    continue
                decisions.append(state.encode())
                state.apply(rng.choice(state.legal_actions()))
            step = max(1, len(decisions) // 5)
            out.extend(decisions[::step][:5] + decisions[-1:])
        SEEDS[name] = out
    return SEEDS[name]


def pick_seed(fdp: atheris.FuzzedDataProvider, name: str) -> bytes:
    seeds = seed_positions(name)
    index: int = fdp.ConsumeIntInRange(0, len(seeds) - 1)
    return seeds[index]


class Aborted(Exception):
    pass


class FakeContext:
    """Just enough of grpc.ServicerContext for the unary handlers."""

    def time_remaining(self) -> float:
        return 5.0

    def add_callback(self, callback: object) -> bool:
        return True

    def abort_with_status(self, status: grpc.Status) -> None:
        if status.code not in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED):
            raise AssertionError(f"request path answered {status.code}: {status.details}")
        raise Aborted()


# A request without iterations searches default_iterations: 50 here instead of 2,000 keeps an
# input around 10 ms under AddressSanitizer. The second servicer's node arena (max_nodes=16)
# fills up in most searches, so the arena-full path runs too.
SERVICERS = (
    AdvisorServicer(ServerConfig(default_iterations=50)),
    AdvisorServicer(ServerConfig(default_iterations=50, max_nodes=16)),
)
REQUESTS = [
    (pb.LegalActionsRequest, "LegalActions"),
    (pb.ApplyActionsRequest, "ApplyActions"),
    (pb.NewGameRequest, "NewGame"),
    (pb.RankMovesRequest, "RankMoves"),
]


def request_path(fdp: atheris.FuzzedDataProvider, name: str) -> None:
    """A request message from fuzz bytes, often around a real position, through the servicer."""
    message_type, method = REQUESTS[fdp.ConsumeIntInRange(0, len(REQUESTS) - 1)]
    try:
        request = message_type.FromString(fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 64)))
    except DecodeError:
        return
    if hasattr(request, "position") and fdp.ConsumeBool():
        request.position.game = name
        request.position.encoded = pick_seed(fdp, name)
    if hasattr(request, "limits"):
        request.limits.iterations = min(request.limits.iterations, 50)
        request.limits.time_ms = 0
        request.limits.threads = 1 + request.limits.threads % 2  # one tree, or two in parallel
    servicer = SERVICERS[fdp.ConsumeIntInRange(0, len(SERVICERS) - 1)]
    try:
        getattr(servicer, method)(request, FakeContext())
    except Aborted:
        pass


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    name = NAMES[fdp.ConsumeIntInRange(0, len(NAMES) - 1)]
    game = games.get(name)
    mode = fdp.ConsumeIntInRange(0, 5)
    if mode == 5:
        request_path(fdp, name)
        return
    try:
        if mode == 0:
            game.decode(fdp.ConsumeBytes(fdp.remaining_bytes()))
        elif mode == 1:
            # Mutate a real position: overwrite a few bytes, keep the checksum valid.
            import zlib

            base = bytearray(pick_seed(fdp, name))
            for _ in range(fdp.ConsumeIntInRange(1, 8)):
                base[fdp.ConsumeIntInRange(10, len(base) - 5)] = fdp.ConsumeInt(1) & 0xFF
            body = bytes(base[:-4])
            state = game.decode(body + zlib.crc32(body).to_bytes(4, "little"))
            if state.legal_actions():
                state.apply(state.legal_actions()[fdp.ConsumeIntInRange(0, len(state.legal_actions()) - 1)])
        elif mode == 2:
            text = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
            try:
                view = json.loads(text)
            except ValueError:
                return
            game.from_view(view, seed=1)
        elif mode == 3:
            state = game.decode(pick_seed(fdp, name))
            state.apply(fdp.ConsumeInt(4))
        else:
            state = game.decode(pick_seed(fdp, name))
            state.parse_action(fdp.ConsumeUnicodeNoSurrogates(64))
    except (games.InvalidPositionError, games.IllegalActionError):
        pass


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
