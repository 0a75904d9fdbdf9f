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


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-300, 300),
    st.text(max_size=5),
    st.lists(st.integers(-2, 300), max_size=70),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
)


@pytest.mark.parametrize("name", games.names())
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_mutated_views_are_valid_or_named_errors(name: str, data: st.DataObject) -> None:
    """A view with one field replaced by junk: a valid state or InvalidPositionError, nothing else."""
    game = games.get(name)
    state = game.new_game(players=game.min_players, seed=data.draw(st.integers(0, 5)))
    view = state.view(state.current_player)
    key = data.draw(st.sampled_from(sorted(view)))
    view[key] = data.draw(JUNK)
    try:
        rebuilt = game.from_view(view, seed=1)
    except games.InvalidPositionError as e:
        assert e.field
        return
    rebuilt.legal_actions()


@pytest.mark.parametrize("name", games.names())
@settings(max_examples=200, deadline=None)
@given(junk=st.dictionaries(st.text(max_size=8), JUNK, max_size=8))
def test_arbitrary_views(name: str, junk: dict[str, object]) -> None:
    try:
        games.get(name).from_view(junk, seed=0)
    except games.InvalidPositionError:
        pass


@pytest.mark.parametrize("name", games.names())
@settings(max_examples=300, deadline=None)
@given(action=st.integers(-(2**40), 2**40), text=st.text(max_size=40))
def test_arbitrary_actions_and_notation(name: str, action: int, text: str) -> None:
    game = games.get(name)
    state = game.new_game(players=game.min_players, seed=1)
    try:
        state.clone().apply(action)
    except games.IllegalActionError:
        pass
    try:
        state.parse_action(text)
    except games.IllegalActionError:
        pass
