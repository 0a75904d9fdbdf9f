# The fused playout loop (GameKernel.playout), included by a game's kernel module after its
# k_current_player, k_apply, k_rollout_action and k_sample_chance. Included rather than
# cimported so that the four calls are direct calls within one C file, which the compiler can
# inline: through the kernel's function pointers a playout decision costs five indirect calls
# (current player, policy and apply, and at a chance event a call into the engine to draw).
#
# It is the search's own playout loop (hortus._ext.mcts, Search._iterate) with the game's
# rollout_action as the policy, step for step and draw for draw, so a search's result does
# not depend on which of the two runs.


cdef int k_playout(uint8_t* buf, Rng* rng, int* steps, int max_steps, int max_decisions,
                   long* decisions) noexcept nogil:
    cdef int p
    cdef long played = 0
    while steps[0] < max_steps:
        p = k_current_player(buf)
        if p == TERMINAL:
            break
        steps[0] += 1
        if p == CHANCE:
            k_apply(buf, k_sample_chance(buf, rng))
            continue
        if max_decisions >= 0 and played >= max_decisions:
            decisions[0] += played
            return 1
        played += 1
        k_apply(buf, k_rollout_action(buf, rng))
    decisions[0] += played
    return 0
