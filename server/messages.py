"""The protobuf messages of games, positions and analyses (``hortus.v1``), built from the
engine's values: one place for every RPC that answers with them."""

from __future__ import annotations

from hortus.games import (
    Game,
    State,
)
from hortus.search import (
    Analysis,
    MoveInfo,
)
from hortus.v1 import advisor_pb2 as pb
from hortus.views import view_digest


def action_message(state: State, action: int) -> pb.Action:
    return pb.Action(id=action, notation=state.action_to_string(action))


def game_info(game: Game) -> pb.GameInfo:
    """``GameInfo`` of a registered game."""
    return pb.GameInfo(
        name=game.name,
        min_players=game.min_players,
        max_players=game.max_players,
        variants=list(game.variants),
        options=[
            pb.RuleOption(name=o.name, default_value=o.default, choices=list(o.choices), doc=o.doc) for o in game.options.values()
        ],
        num_distinct_actions=game.num_distinct_actions,
    )


def position_info(state: State) -> pb.PositionInfo:
    """What a frontend needs after every change of `state`."""
    terminal = state.is_terminal()
    return pb.PositionInfo(
        position=pb.Position(game=state.game.name, encoded=state.encode()),
        current_player=state.current_player,
        terminal=terminal,
        scores=state.scores(),
        returns=state.returns() if terminal else [],
        rendered=state.render(),
        seat_rendered=[state.render(seat) for seat in range(state.num_players)],
    )


def turn_message(state: State, move: MoveInfo) -> list[pb.Action]:
    """The move's principal variation as actions with notation (replayed if not given)."""
    pv = list(move.principal_variation) or [move.action]
    notation = list(move.principal_variation_notation)
    if len(notation) != len(pv):
        notation = []
        replay = state.clone()
        for action in pv:
            notation.append(replay.action_to_string(action))
            replay.apply(action)
    return [pb.Action(id=a, notation=n) for a, n in zip(pv, notation)]


def analysis_message(state: State, analysis: Analysis, partial: bool, max_moves: int = 0) -> pb.Analysis:
    """The wire form of `analysis`, keeping the first `max_moves` moves (0 = all)."""
    moves = analysis.moves[:max_moves] if max_moves else analysis.moves
    return pb.Analysis(
        seat=analysis.seat,
        moves=[
            pb.MoveAnalysis(
                action=pb.Action(id=m.action, notation=m.notation),
                visits=m.visits,
                win_probability=m.win_probability,
                expected_scores=list(m.expected_scores),
                principal_variation=turn_message(state, m),
                reason=m.reason,
                value_spread=m.value_spread,
                draw_share=m.draw_share,
                draw_spread=m.draw_spread,
                draw_points_spread=m.draw_points_spread,
                exact=m.exact,
            )
            for m in moves
        ],
        iterations=analysis.iterations,
        partial=partial,
        elapsed_ms=analysis.elapsed_ms,
        nodes=analysis.nodes,
        tree_full=analysis.tree_full,
        # the seat to move's view, which the analysis depends on alone (see the proto)
        view_digest=view_digest(state.view(analysis.seat)),
    )
