# The kernel contract: the seam between games and search.
#
# Every game fills one GameKernel with pointers to C functions over a flat, fixed-size state
# buffer (memcpy is the clone) and hands its address to the search in a PyCapsule named
# KERNEL_CAPSULE_NAME. The search never cimports a game. Every function is noexcept nogil:
# inputs reaching these functions have been validated while holding the GIL (decode checks
# every field; apply is only ever called with an action returned by legal_actions or
# chance_outcomes), so there is no failure to report.
from libc.stdint cimport uint8_t, int32_t
from hortus._ext.rng cimport Rng

cdef enum:
    CHANCE = -1        # current_player() at a chance node (as in OpenSpiel)
    TERMINAL = -4      # current_player() once the game is over
    MAX_PLAYERS = 4    # the largest seat count of any game; sizes per-seat arrays

ctypedef struct GameKernel:
    int state_bytes            # size of the whole buffer: serialized core + derived cache
    int core_bytes             # the prefix that is serialized; the rest is rebuilt by rebuild()
    int num_distinct_actions   # action ids are in [0, num_distinct_actions)
    int max_players
    int max_legal_actions      # bound on legal_actions() and chance_outcomes() counts
    int max_game_length        # bound on decisions + chance events in one game (loop guard)

    int (*num_players)(const uint8_t* s) noexcept nogil
    # A seat in [0, num_players), CHANCE or TERMINAL. The seat is the owner of the decision,
    # which may differ from the player whose turn it is.
    int (*current_player)(const uint8_t* s) noexcept nogil
    # Writes every rule-legal action in ascending order (every move the rulebook allows, in
    # any order a player may make them); returns their count (0 only at chance or terminal
    # states). This is what the public surface offers and accepts.
    int (*legal_actions)(const uint8_t* s, int32_t* out) noexcept nogil
    # Writes chance outcomes (ascending actions) and positive weights (need not sum to 1).
    int (*chance_outcomes)(const uint8_t* s, int32_t* out_actions, double* out_weights) noexcept nogil
    void (*apply)(uint8_t* s, int32_t action) noexcept nogil
    # Terminal only: win share per seat (1 for a sole winner, 1/k each for a k-way tie, else 0).
    void (*returns)(const uint8_t* s, double* out) noexcept nogil
    # Points per seat (final points at a terminal state, points so far otherwise).
    void (*scores)(const uint8_t* s, double* out) noexcept nogil
    # Resample in place everything `observer` cannot see, consistently with what it can see.
    # The result must depend only on the observer's information and the rng (fairness).
    # The search calls it at the root of every iteration, so it also marks the state as a
    # search's world: a game whose search_actions remember the order of moves already made
    # (to prune equivalent orders) starts that memory empty here and keeps it outside the
    # serialized core, so a search from a position a player reached in any order still
    # considers every move.
    void (*determinize)(uint8_t* s, int observer, Rng* rng) noexcept nogil
    # Optional (NULL = uniform over legal actions): a cheap playout policy.
    int32_t (*rollout_action)(const uint8_t* s, Rng* rng) noexcept nogil
    # Optional (NULL = no cache): recompute the derived cache after the core was written.
    void (*rebuild)(uint8_t* s) noexcept nogil
    # Optional (NULL = drawn from chance_outcomes by weight): one chance outcome drawn with
    # exactly the probabilities chance_outcomes gives, without listing them (a fast path
    # for playouts, where chance events can be as frequent as decisions).
    int32_t (*sample_chance)(const uint8_t* s, Rng* rng) noexcept nogil
    # Optional (NULL = legal_actions): the canonical subset of the legal actions that the
    # search expands and playouts draw from, with equivalent orderings of commuting moves
    # pruned (e.g. coin cards in ascending order). Ascending, never empty where legal_actions
    # is not, and every position reachable through legal_actions stays reachable through it
    # (checked by the conformance suite). Pruning belongs to the search alone: apply accepts
    # every legal action, and the public surface never sees this list.
    int (*search_actions)(const uint8_t* s, int32_t* out) noexcept nogil
    # Optional (NULL = no learned evaluation): `num_features` numbers describing the state
    # from `seat`'s side, written to `out`, for the game's value model (leaves are
    # evaluated on determinized states, so the features may read the whole buffer). Cheap:
    # it runs once per seat at every evaluated leaf. Returns num_features.
    int num_features
    int (*features)(const uint8_t* s, int seat, double* out) noexcept nogil
    # Optional (NULL = rollout_action): the playout policy of the frozen baseline search
    # (`mcts-base`, Search.run(baseline_playout=True)). A game whose rollout_action
    # has changed since the baseline was frozen keeps the old policy here, so the yardstick
    # every change is measured against plays as it always did.
    int32_t (*baseline_rollout_action)(const uint8_t* s, Rng* rng) noexcept nogil
    # Optional (NULL = the search's own loop): play out with rollout_action, chance events
    # drawn by sample_chance, exactly as the search's loop would: stop at the end of the game,
    # after max_steps steps (decisions and chance events, counted in *steps from its value
    # on entry), or at a decision once max_decisions (-1 = no limit) have been made, which
    # returns 1 (a cut playout; else 0). Adds the decisions made to *decisions. The shared
    # body is hortus/_ext/playout.pxi: a kernel includes it (or writes the same loop out with
    # shortcuts of its own, step for step the same) and sets this to k_playout.
    int (*playout)(uint8_t* s, Rng* rng, int* steps, int max_steps, int max_decisions,
                   long* decisions) noexcept nogil

from cpython.pycapsule cimport PyCapsule_New, PyCapsule_GetPointer, PyCapsule_IsValid


cdef inline object kernel_to_capsule(GameKernel* kernel):
    """Wrap a game's static GameKernel for the search (capsule name "hortus.GameKernel")."""
    return PyCapsule_New(<void*>kernel, b"hortus.GameKernel", NULL)


cdef inline GameKernel* kernel_from_capsule(object capsule) except NULL:
    if not PyCapsule_IsValid(capsule, b"hortus.GameKernel"):
        raise TypeError("expected a hortus.GameKernel capsule")
    return <GameKernel*>PyCapsule_GetPointer(capsule, b"hortus.GameKernel")


cdef inline int searched_actions(const GameKernel* k, const uint8_t* s, int32_t* out) noexcept nogil:
    """The actions the search expands and playouts draw from: the game's canonical subset
    (search_actions) when it has one, else every legal action."""
    if k.search_actions != NULL:
        return k.search_actions(s, out)
    return k.legal_actions(s, out)
