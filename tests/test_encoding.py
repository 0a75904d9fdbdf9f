"""Encoded positions: every malformed byte string is an InvalidPositionError naming a field."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hortus import games


def sample_encodings(name: str, count: int = 20) -> list[bytes]:
    game = games.get(name)
    rng = random.Random(0)
    state = game.new_game(players=game.min_players, seed=0)
    out = []
    while not state.is_terminal() and len(out) < count:
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        out.append(state.encode())
        for _ in range(3):
            if state.legal_actions():
                state.apply(rng.choice(state.legal_actions()))
    return out


@pytest.mark.parametrize("name", games.names())
def test_header_fields_are_named(name: str) -> None:
    game = games.get(name)
    data = bytearray(sample_encodings(name, 1)[0])
    cases = {0: "position.magic", 4: "position.version", 5: "position.game_id", 7: "position.players"}
    for offset, field in cases.items():
        broken = bytearray(data)
        broken[offset] ^= 0x7F
        with pytest.raises(games.InvalidPositionError) as info:
            game.decode(bytes(broken))
        assert info.value.field == field
    with pytest.raises(games.InvalidPositionError) as info:
        game.decode(bytes(data[:-1]))
    assert info.value.field == "position.length"
    broken = bytearray(data)
    broken[12] ^= 1
    with pytest.raises(games.InvalidPositionError) as info:
        game.decode(bytes(broken))
    assert info.value.field == "position.checksum"


def refresh_checksum(data: bytearray) -> bytes:
    import zlib

    body = bytes(data[:-4])
    return body + zlib.crc32(body).to_bytes(4, "little")


@pytest.mark.parametrize("name", games.names())
def test_corrupted_bodies_with_valid_checksums_never_crash(name: str) -> None:
    """Flip every byte of the state (checksum recomputed): valid or a named error, no crash."""
    game = games.get(name)
    for data in sample_encodings(name, 4):
        for offset in range(10, len(data) - 4):
            for value in (0, 1, 0x7F, 0xFF, data[offset] ^ 0x20):
                broken = bytearray(data)
                broken[offset] = value
                try:
                    state = game.decode(refresh_checksum(broken))
                except games.InvalidPositionError as e:
                    assert e.field
                    continue
                # Accepted positions must be playable.
                if state.legal_actions():
                    state.clone().apply(state.legal_actions()[0])


@pytest.mark.parametrize("name", games.names())
@settings(max_examples=300, deadline=None)
@given(junk=st.binary(max_size=600))
def test_arbitrary_bytes(name: str, junk: bytes) -> None:
    try:
        games.get(name).decode(junk)
    except games.InvalidPositionError:
        pass
