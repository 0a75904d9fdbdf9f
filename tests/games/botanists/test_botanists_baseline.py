"""Botanists's frozen baseline: `mcts-base` plays move for move as on 2026-12-01.

Botanists's playout policy has changed since (docs/games/botanists.md); the policy of 2026-12-01 stays the kernel's
`baseline_rollout_action`, and this replay says that `mcts-base` still plays with it."""

from __future__ import annotations

from positions import assert_baseline_frozen, midgame

# Moves of seeded `mcts-base:100` self-play (seat 0 bot seed 1, seat 1 bot seed 2; the game's
# seed drives setup and chance), recorded on main at 8953d7a.
FROZEN_GAMES = {
    7: ([-11.0, -28.0], [12, 75, 113, 8, 77, 115, 195, 19, 41, 113, 229, 318, 17, 84, 113, 146, 153, 156, 22, 105,
         109, 318, 26, 196, 237, 239, 28, 181, 237, 239, 12, 95, 112, 226, 353, 11, 98, 110, 319,
         24, 78, 110, 319, 542, 566, 568, 13, 54, 115, 227, 3, 39, 113, 175, 22, 66, 111, 186, 10,
         81, 115, 318, 2, 47, 113, 229, 317, 0, 74, 110, 402, 8, 100, 112, 197, 400, 7, 88, 111,
         334, 318, 11, 85, 111, 146, 151, 155, 354, 18, 67, 111, 229, 536, 538, 568, 21, 43, 110,
         13, 71, 110, 319, 16, 104, 108, 319, 1, 103, 107, 12, 48, 107, 402, 6, 34, 112, 318, 18,
         58, 106, 318, 10, 38, 112, 147, 151, 159, 7, 53, 107, 317, 15, 37, 109, 384, 319]),
    8: ([-74.0, -43.0], [11, 67, 111, 179, 1, 53, 113, 229, 402, 13, 93, 113, 147, 154, 157, 318, 12, 82, 114, 194,
         338, 7, 95, 107, 402, 23, 54, 112, 227, 317, 26, 225, 236, 239, 402, 402, 28, 237, 239,
         27, 120, 136, 233, 238, 309, 276, 12, 90, 110, 536, 548, 568, 21, 103, 115, 0, 98, 113,
         228, 332, 11, 62, 111, 229, 10, 100, 107, 5, 59, 110, 357, 6, 88, 114, 116, 133, 402, 25,
         228, 233, 238, 265, 282, 402, 13, 46, 107, 386, 1, 33, 115, 185, 317, 353, 3, 79, 112,
         229, 318, 547, 535, 567, 7, 68, 111, 229, 402, 5, 57, 110, 1, 78, 112, 228, 317, 12, 94,
         111, 317, 13, 89, 111, 177, 361, 1, 105, 108, 10, 76, 111, 229, 317, 5, 39, 107, 317, 25,
         176, 231, 238, 240, 293, 0, 41, 112, 225, 317]),
}
FROZEN_ANALYSIS = [(11, 62), (12, 50), (16, 50), (8, 46), (13, 46), (28, 44), (2, 41), (7, 38),
                   (26, 31), (0, 22), (10, 15), (5, 13), (17, 11), (18, 11), (1, 10), (27, 10)]
# ^ the same day's baseline analysis (500 iterations, seed 5, margin 0.1 / 10 points) of a
# position after 42 random steps.


def test_the_frozen_baseline_plays_as_on_2026_12_01() -> None:
    """mcts-base (baseline_playout) plays move for move as when these games were recorded."""
    assert_baseline_frozen("botanists", FROZEN_GAMES, midgame("botanists", 3, 42), FROZEN_ANALYSIS)
