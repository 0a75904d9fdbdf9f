"""One suite for every registered game: seeded random games checking the contract's
invariants at every step (OpenSpiel's random-simulation test, hortus flavour)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest

from hortus import games
from hortus.clients import AdvisorClient, Position
from hortus.server import ServerConfig
from servers import Servers

GAMES_PER_NAME = 200


def seat_counts(game: games.Game) -> list[int]:
    return list(range(game.min_players, game.max_players + 1))


def play_checked(game: games.Game, players: int, seed: int) -> games.State:
    rng = random.Random(seed)
    state = game.new_game(players=players, seed=seed)
    steps = 0
    while True:
        # Encode/decode round-trip; decode re-validates every field, including conservation
        # (every component exactly once), so this also checks that components are conserved.
        data = state.encode()
        decoded = game.decode(data)
        assert decoded.encode() == data
        assert decoded.current_player == state.current_player
        if state.is_terminal():
            break
        if state.is_chance():
            outcomes = state.chance_outcomes()
            assert outcomes, "a chance node has outcomes"
            assert abs(sum(p for _, p in outcomes) - 1.0) < 1e-9
            assert all(p > 0 for _, p in outcomes)
            action = rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0]
        else:
            legal = state.legal_actions()
            assert legal, "legal actions exist until the end"
            assert legal == sorted(set(legal))
            assert all(0 <= a < game.num_distinct_actions for a in legal)
            action = rng.choice(legal)
            # The playout policy, where a game has one, only ever proposes legal actions.
            proposal = state.kernel_state.rollout_action(seed * 7919 + steps)
            assert proposal is None or proposal in legal
            proposal = state.kernel_state.rollout_action(seed * 7919 + steps, baseline=True)
            assert proposal is None or proposal in legal
        # Notation round-trips exactly.
        text = state.action_to_string(action)
        assert state.parse_action(text) == action
        # Clones are independent.
        clone = state.clone()
        clone.apply(action)
        assert state.encode() == data
        state.apply(action)
        assert state.encode() == clone.encode()
        steps += 1
        assert steps < 10_000, "the game ends"
    lo, hi = game.score_range
    scores = state.scores()
    assert len(scores) == players and all(lo <= v <= hi for v in scores)
    returns = state.returns()
    assert abs(sum(returns) - 1.0) < 1e-9 and all(0.0 <= r <= 1.0 for r in returns)
    return state


@pytest.mark.parametrize("name", games.names())
def test_random_games_keep_every_invariant(name: str) -> None:
    game = games.get(name)
    counts = seat_counts(game)
    for i in range(GAMES_PER_NAME):
        play_checked(game, counts[i % len(counts)], seed=i)


@pytest.mark.parametrize("name", games.names())
def test_metadata(name: str) -> None:
    game = games.get(name)
    assert game.name == name
    assert 1 <= game.min_players <= game.max_players <= 4
    assert game.num_distinct_actions > 0
    for option in game.options.values():
        assert option.default in option.choices


@pytest.mark.parametrize("name", games.names())
def test_every_option_value_plays(name: str) -> None:
    game = games.get(name)
    for option in game.options.values():
        for value in option.choices:
            state = game.new_game(players=game.min_players, seed=1, options={option.name: value})
            assert state.legal_actions()


@pytest.mark.parametrize("name", games.names())
def test_unknown_options_and_seat_counts_are_refused(name: str) -> None:
    game = games.get(name)
    with pytest.raises(ValueError):
        game.new_game(players=game.max_players + 1)
    with pytest.raises(ValueError):
        game.new_game(options={"no_such_option": "x"})


def test_unknown_game() -> None:
    with pytest.raises(games.UnknownGameError):
        games.get("chess")


@pytest.mark.parametrize("name", games.names())
def test_setup_chance_can_be_reported_by_a_frontend(name: str) -> None:
    game = games.get(name)
    state = game.new_game(players=game.min_players)
    assert state.is_chance()
    while state.is_chance():
        action, _ = state.chance_outcomes()[0]
        state.apply(action)
    assert state.legal_actions()


@pytest.mark.parametrize("name", games.names())
def test_views_rebuild_the_position(name: str) -> None:
    game = games.get(name)
    rng = random.Random(5)
    state = game.new_game(players=game.min_players, seed=5)
    for _ in range(30):
        if state.is_terminal():
            break
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        seat = state.current_player
        rebuilt = game.from_view(state.view(seat), seed=9)
        assert rebuilt.view(seat) == state.view(seat)
        assert rebuilt.legal_actions() == state.legal_actions()
        state.apply(rng.choice(state.legal_actions()))


@pytest.mark.parametrize("name", games.names())
def test_sampled_chance_follows_chance_outcomes(name: str) -> None:
    """The kernel's chance sampler (fast path or by weight) draws outcomes with the
    probabilities chance_outcomes states (seeded, so deterministic)."""
    game = games.get(name)
    state = game.new_game(players=game.min_players)
    assert state.is_chance()
    outcomes = dict(state.chance_outcomes())
    draws = 20000
    counts: dict[int, int] = {}
    for seed in range(draws):
        action = state.kernel_state.sample_chance(seed)
        assert action in outcomes
        counts[action] = counts.get(action, 0) + 1
    for action, p in outcomes.items():
        expected = p * draws
        # 5 standard deviations of a binomial count: a real bias fails, noise never does.
        assert abs(counts.get(action, 0) - expected) <= 5 * (expected * (1 - p)) ** 0.5 + 1


@pytest.mark.parametrize("name", games.names())
def test_pictures_show_a_seat_only_what_it_sees(name: str) -> None:
    """render(seat) is unchanged by resampling what that seat cannot see, and the public
    picture by resampling anyone's hidden parts: a picture shown to a player never leaks
    another seat's hand."""
    game = games.get(name)
    for players in seat_counts(game):
        rng = random.Random(players)
        state = game.new_game(players=players, seed=players)
        for step in range(60):
            if state.is_terminal():
                break
            if state.is_chance():
                state.resolve_chance(rng)
                continue
            if step % 7 == 0:
                public = state.render()
                for seat in range(players):
                    own = state.render(seat)
                    for world_seed in (1, 2, 3):
                        world = state.clone()
                        world.kernel_state.determinize(seat, world_seed)
                        assert world.render(seat) == own
                        assert world.render() == public
            state.apply(rng.choice(state.legal_actions()))
        with pytest.raises(ValueError):
            state.render(players)


# --- any order: the search's canonical subset loses nothing ---------------------------------
def _turn_ends(state: games.State, actions_of: str, cap: int = 6000) -> set[bytes] | None:
    """The positions where the turn of the seat to move can end (a chance node, another seat
    to decide, or the end of the game), choosing from `actions_of` ("legal_actions" or
    "search_actions"); None when the turn's tree passes `cap` positions."""
    seat = state.current_player
    seen: set[bytes] = {state.encode()}
    ends: set[bytes] = set()
    stack = [state]
    while stack:
        s = stack.pop()
        for action in getattr(s, actions_of)():
            child = s.clone()
            child.apply(action)
            key = child.encode()
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > cap:
                return None
            if child.current_player == seat:
                stack.append(child)
            else:
                ends.add(key)
    return ends


@pytest.mark.parametrize("name", games.names())
def test_search_subset_reaches_every_position_the_rules_allow(name: str) -> None:
    """The public surface accepts every rule-legal move in any order; the search expands only
    a canonical subset (search_actions) with equivalent orders pruned. Every way the turn can
    end through the rule-legal moves, in any order, must also be reachable through the subset
    (so no order a player may choose leads where the search cannot follow), and the subset is
    never empty where a move exists. (Intermediate positions may differ: a game may remember
    the order taken so far, outside the encoded position or until the turn ends.)"""
    game = games.get(name)
    checked = 0
    for players in seat_counts(game):
        for seed in range(6):
            rng = random.Random(seed)
            state = game.new_game(players=players, seed=seed)
            previous = None
            for step in range(400):
                if state.is_terminal():
                    break
                if state.is_chance():
                    state.resolve_chance(rng)
                    continue
                legal = state.legal_actions()
                subset = state.search_actions()
                assert subset and set(subset) <= set(legal) and subset == sorted(subset)
                if state.current_player != previous and checked < 12 * (players + seed):
                    # the start of a turn: every order of the whole turn
                    full = _turn_ends(state, "legal_actions")
                    if full is not None:
                        pruned = _turn_ends(state, "search_actions")
                        assert pruned is not None and full <= pruned, (
                            f"{name}: a turn played in a rule-legal order ends where the search cannot reach"
                        )
                        checked += 1
                previous = state.current_player
                state.apply(rng.choice(legal))
    assert checked > 20


# --- no leak: what a seat is shown depends on its view alone -------------------------------
@pytest.fixture(scope="module")
def advisor(serve_module: Servers) -> Iterator[AdvisorClient]:
    port = serve_module(ServerConfig(default_iterations=50)).port
    with AdvisorClient(f"127.0.0.1:{port}") as client:
        yield client


def _shown_to(client: AdvisorClient, state: games.State, seat: int) -> tuple[object, ...]:
    """Everything hortus shows `seat` about `state`: its view, its picture, and the answer
    of LegalActions(for_seat) (what `hortus play` and the pages list and print)."""
    legal = client.legal_actions(Position(state.game.name, state.encode()), for_seat=seat)
    return (
        json.dumps(state.view(seat), sort_keys=True),
        state.render(seat),
        legal,
    )


@pytest.mark.parametrize("name", games.names())
def test_nothing_hidden_reaches_a_seat(name: str, advisor: AdvisorClient) -> None:
    """For random positions (decisions and chance nodes) and every seat: the view, the
    picture and LegalActions(for_seat) are identical across re-deals of what that seat
    cannot see (from_view with other seeds, and the kernel's own determinize)."""
    game = games.get(name)
    compared = 0
    for players in seat_counts(game):
        rng = random.Random(100 + players)
        state = game.new_game(players=players, seed=100 + players)
        for step in range(240):
            if state.is_terminal():
                break
            if step % 9 == 0:
                for seat in range(players):
                    shown = _shown_to(advisor, state, seat)
                    worlds = [game.from_view(state.view(seat), seed=k) for k in (1, 2)]
                    redealt = state.clone()
                    redealt.kernel_state.determinize(seat, 3 + step)
                    for world in [*worlds, redealt]:
                        assert _shown_to(advisor, world, seat) == shown, f"{name}: seat {seat} step {step}"
                        compared += 1
            if state.is_chance():
                state.resolve_chance(rng)
            else:
                state.apply(rng.choice(state.legal_actions()))
    assert compared > 30


@pytest.mark.parametrize("name", games.names())
def test_hides_information_says_whether_a_view_is_the_whole_position(name: str) -> None:
    """A game that hides nothing (``hides_information`` False: the answer cache shares its
    answers between clients) rebuilds every position exactly from any seat's view, whatever
    the seed of the re-deal; one that hides something has positions where a re-deal differs."""
    game = games.get(name)
    differs = False
    for seed in range(6):
        rng = random.Random(seed)
        state = game.new_game(players=game.max_players, seed=seed)
        for ply in range(400):
            if state.is_terminal():
                break
            if state.is_chance():
                state.resolve_chance(rng)
                continue
            if ply % 5 == 0:
                for seat in range(state.num_players):
                    for redeal in (1, 2, 3):
                        if game.from_view(state.view(seat), seed=redeal).encode() != state.encode():
                            differs = True
                            assert game.hides_information, (seed, ply, seat, redeal)
            state.apply(rng.choice(state.legal_actions()))
    assert differs == game.hides_information
