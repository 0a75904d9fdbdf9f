"""Coverage-guided fuzzing of everything a client can send (atheris / libFuzzer).

    pip install atheris
    python tests/fuzz/fuzz_positions.py -atheris_runs=200000          # all games
    python tests/fuzz/fuzz_positions.py -max_total_time=600 corpus/   # with a corpus folder

Each input is split by its first byte into: a game, then one of
  decode(bytes) | from_view(JSON) | apply(action id) on a decoded seed position |
  parse_action(text) | the gRPC request path (servicer methods, in process).
Anything other than a valid result, InvalidPositionError, IllegalActionError (or a gRPC
INVALID_ARGUMENT for the request path) is a finding; a crash is the worst one.
For native bugs, run it against extensions built with AddressSanitizer (see README).
"""

from __future__ import annotations

import json
import random
import sys

import atheris

with atheris.instrument_imports():
    from hortus import games

    for _name in games.names():
        games.get(_name)  # import (and so instrument) every game's Python face

NAMES = games.names()
SEEDS: dict[str, list[bytes]] = {}


def seed_positions(name: str) -> list[bytes]:
    """A few real positions of a game, to mutate around."""
    if name not in SEEDS:
        game = games.get(name)
        rng = random.Random(0)
        state = game.new_game(players=game.min_players, seed=0)
        out = []
        while not state.is_terminal() and len(out) < 8:
            if state.is_chance():
                state.resolve_chance(rng)
                continue
            out.append(state.encode())
            for _ in range(5):
                if state.legal_actions():
                    state.apply(rng.choice(state.legal_actions()))
        SEEDS[name] = out
    return SEEDS[name]


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    name = NAMES[fdp.ConsumeIntInRange(0, len(NAMES) - 1)]
    game = games.get(name)
    mode = fdp.ConsumeIntInRange(0, 4)
    try:
        if mode == 0:
            game.decode(fdp.ConsumeBytes(fdp.remaining_bytes()))
        elif mode == 1:
            # Mutate a real position: overwrite a few bytes, keep the checksum valid.
            import zlib

            base = bytearray(random.Random(fdp.ConsumeIntInRange(0, 7)).choice(seed_positions(name)))
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
            state = game.decode(random.Random(fdp.ConsumeIntInRange(0, 7)).choice(seed_positions(name)))
            state.apply(fdp.ConsumeInt(4))
        else:
            state = game.decode(seed_positions(name)[0])
            state.parse_action(fdp.ConsumeUnicodeNoSurrogates(64))
    except (games.InvalidPositionError, games.IllegalActionError):
        pass


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
