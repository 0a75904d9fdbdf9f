# cython: language_level=3
"""Single-observer information-set MCTS over any GameKernel, the whole loop without the GIL.

One iteration:
 1. copy the root and determinize it for the searching seat (everything it cannot see is
    resampled, so the tree only ever learns from the observer's information set);
 2. descend: at a chance node sample an outcome by weight and stay on the same tree node
    (open loop: the tree is keyed by decisions only); at a decision node the children legal in
    this determinization are "available" (their availability count grows) and the one with the
    best UCB for the seat to move is taken; the first untried legal action is expanded;
 3. play out to the end (the game's rollout policy, else uniform), or, with a value model
    (set_model), only `eval_plies` decisions and then let the model estimate each seat's win
    share from the game's features of the (determinized) state;
 4. back up the reward vector (one value per seat: max^n) along the path.

Nodes live in an arena of C structs grown by doubling (a mapping of its own once it is large,
see _ext/memory.pxd), bounded by max_nodes: when the arena is full the search keeps iterating
without expanding (it truncates, it does not fail).

Root-parallel searches run one Search per thread, allocated one after the other: everything a
search writes while it runs (its fields, scratch buffers and node arena) sits on cache lines of
its own, so two threads never share a line (see _ext/memory.pxd).
"""
from libc.stdint cimport uint8_t, int8_t, int32_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy, memset, memcmp
from libc.math cimport sqrt, log, tanh, pow, exp, fabs
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from hortus._ext.kernel cimport (GameKernel, CHANCE, TERMINAL, MAX_PLAYERS, kernel_from_capsule,
                                  searched_actions)
from hortus._ext.rng cimport Rng, rng_seed, rng_below, rng_uniform
from hortus._ext.engine cimport KernelState, sample_chance
from hortus._ext.memory cimport CACHE_LINE, alloc_own_lines, arena_resize, arena_free


ctypedef struct Node:
    int32_t parent
    int32_t first_child
    int32_t next_sibling
    int32_t action          # the action that leads from the parent to this node
    int32_t mover           # the seat that chose `action` at the parent
    uint32_t visits
    uint32_t availability   # times this action was legal when its parent was visited
    # `mover`'s value here, counting its own best continuation (turn_max). A float: it fills
    # the padding before the doubles, so a node stays 136 bytes (and cache lines per node).
    float turn_value
    double reward[MAX_PLAYERS]   # sum of search rewards per seat
    double win[MAX_PLAYERS]      # sum of win shares per seat
    double score[MAX_PLAYERS]    # sum of final points per seat
    double mover_sq              # sum of the squared reward of `mover` (value spread)


# A node's sibling link and action again, in a dense array beside the arena (Search.links,
# indexed like the nodes). Selection walks a node's children through it: through the nodes
# themselves each child's load waited for the one before (a 136-byte node per child, scattered
# over a tree of megabytes), while the links of a whole tree stay in cache, and only a legal
# child's node is loaded, its load overlapping the next ones.
ctypedef struct ChildLink:
    int32_t next_sibling
    int32_t action


# Progressive widening allows widening_c * visits**WIDENING_ALPHA children per node; 0.5 was
# the only exponent ever used, so it is fixed here rather than a run() argument.
cdef double WIDENING_ALPHA = 0.5


# Selection passes over a child whose UCB cannot beat the best so far (_iterate). UCB_SLACK
# is the test's margin, relative to the values compared: their rounding errors are a few
# times 2**-53 (about 1e-16) of them, so a margin of 1e-9 never passes over a child that the
# UCB computed in full would pick; children within it of the best get the full computation.
cdef double UCB_SLACK = 1e-9
cdef bint PRUNE_SELECTION = True


def _set_selection_pruning(bint on):
    """Pass over hopeless children in selection (on, the default) or compute every child's UCB
    in full (off): for the test that both choose the same, bit for bit."""
    global PRUNE_SELECTION
    PRUNE_SELECTION = on


# log(n) for the availability counts the selection sees most (n < LOG_TABLE_SIZE), filled
# once at import with the same libm log the search would call, so a lookup gives the same bits.
# A call per child per visit was up to 3% of a search's instructions (callgrind); the
# 512 KiB table is read only near each node's own count, which stays in cache.
cdef enum:
    LOG_TABLE_SIZE = 1 << 16
cdef double LOG_TABLE[LOG_TABLE_SIZE]
cdef int _log_i
for _log_i in range(1, LOG_TABLE_SIZE):
    LOG_TABLE[_log_i] = log(<double>_log_i)


cdef inline double log_count(uint32_t n) noexcept nogil:
    """log(n) for n >= 1, bit for bit."""
    if n < LOG_TABLE_SIZE:
        return LOG_TABLE[n]
    return log(<double>n)


cdef enum:
    MAX_FEATURES = 32     # bound on GameKernel.num_features for a value model
    MAX_HIDDEN = 32       # bound on a value model's hidden units


ctypedef struct ValueModel:
    # v(seat) = sigmoid(w2 . h + b2), h = tanh(w1 f + b1) (hidden > 0) or h = f (hidden = 0),
    # f = the game's features from the seat's side; the input scaling is folded into w1.
    int features
    int hidden
    double w1[MAX_HIDDEN][MAX_FEATURES]
    double b1[MAX_HIDDEN]
    double w2[MAX_FEATURES]    # MAX_FEATURES == MAX_HIDDEN: holds either layout
    double b2
    # Optional points head: a seat's expected final points = pw . f + pb (has_points). At a
    # cut the points so far are not the final points (a game may bank its points only at
    # scoring phases): this estimate is what the analysis reports as expected points there.
    bint has_points
    double pw[MAX_FEATURES]
    double pb


cdef double model_logit(const ValueModel* m, const double* f) noexcept nogil:
    cdef int i, j
    cdef double z = m.b2, a
    if m.hidden == 0:
        for j in range(m.features):
            z += m.w2[j] * f[j]
        return z
    for i in range(m.hidden):
        a = m.b1[i]
        for j in range(m.features):
            a += m.w1[i][j] * f[j]
        z += m.w2[i] * tanh(a)
    return z


cdef void model_win_shares(const GameKernel* k, const ValueModel* m, const uint8_t* s, int players,
                           double* win, double* points) noexcept nogil:
    """Each seat's estimated win share at a non-terminal state: the model's value from each
    seat's side, normalised to sum to 1 like the game's returns; and, when the model has a
    points head, each seat's expected final points in `points` (left as they are otherwise)."""
    cdef double f[MAX_FEATURES]
    cdef double total = 0.0
    cdef double p
    cdef int i, j
    for i in range(players):
        k.features(s, i, f)
        win[i] = 1.0 / (1.0 + exp(-model_logit(m, f)))
        total += win[i]
        if m.has_points:
            p = m.pb
            for j in range(m.features):
                p += m.pw[j] * f[j]
            points[i] = p
    if total > 0.0:
        for i in range(players):
            win[i] /= total


cdef inline size_t _guard_nodes() noexcept nogil:
    """Nodes of padding at each end of the arena: at least a cache line."""
    return (CACHE_LINE + sizeof(Node) - 1) // sizeof(Node)


cdef inline size_t _arena_bytes(int32_t cap_nodes) noexcept nogil:
    """Bytes of an arena of `cap_nodes` nodes, guards included."""
    return (cap_nodes + 2 * _guard_nodes()) * sizeof(Node)


cdef double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


ctypedef int32_t (*PolicyFn)(const uint8_t* s, Rng* rng) noexcept nogil


cdef class Search:
    """One ISMCTS tree for one root position and one observer (the seat to move at the root)."""

    cdef char _guard_before[CACHE_LINE]  # keeps another object's fields off the lines written here
    cdef GameKernel* kernel
    cdef object capsule
    cdef uint8_t* root
    cdef uint8_t* work
    cdef Node* nodes
    cdef ChildLink* links          # per node: next_sibling and action, as in the node
    cdef int32_t n_nodes
    cdef int32_t cap_nodes
    cdef int32_t max_nodes
    cdef int32_t* legal
    cdef double* weights
    cdef uint32_t* legal_stamp     # per action id: stamp of the last visit where it was legal
    cdef uint32_t* seen_stamp      # per action id: stamp of the last visit where a child had it
    cdef uint32_t stamp
    cdef int observer
    cdef int players
    cdef int cancelled
    # Parameters of the current run() (see run's docstring).
    cdef double exploration
    cdef double margin_weight
    cdef double margin_scale
    cdef bint paranoid
    cdef double widening_c
    cdef bint use_policy
    cdef bint expand_policy        # expansion tries the playout policy's choice first
    cdef bint turn_max             # selection values a move by its seat's best own continuation
    cdef uint32_t turn_min_visits  # visits a continuation needs to count for turn_max
    # The playout policy of this run: the game's rollout_action, or its baseline_rollout_action
    # for the frozen baseline (run(baseline_playout=True)); NULL = uniform over the actions.
    cdef PolicyFn policy
    cdef ValueModel* model         # NULL = no value model (set_model)
    cdef int eval_plies            # -1: play out to the end; else decisions before the model
    cdef uint8_t* root_allowed     # per action id: 1 = the root may expand it; NULL = no mask
    cdef public long iterations_done
    # Decisions simulated (tree and playout, chance events not counted) since the Search was
    # made: the denominator of bench/versus_openspiel.py's time per simulated decision.
    cdef public long decisions_done
    cdef public bint truncated
    cdef Rng rng                   # the RNG of the runs (run(resume=True) goes on with it)
    cdef bint seeded               # a run has seeded `rng`
    cdef Node* node_block          # the arena with _guard_nodes() of padding at each end
    cdef int node_block_mapped     # the arena is a mapping of its own (arena_resize)
    cdef char _guard_after[CACHE_LINE]

    def __cinit__(self, KernelState root, int max_nodes=1_000_000):
        self.kernel = root.kernel
        self.capsule = root.capsule
        cdef GameKernel* k = self.kernel
        cdef int p = k.current_player(root.buf)
        if p < 0:
            raise ValueError("the root must be a decision node (not chance, not terminal)")
        if max_nodes < 1:
            raise ValueError("max_nodes must be >= 1")
        self.observer = p
        self.players = k.num_players(root.buf)
        self.max_nodes = max_nodes
        self.root = <uint8_t*>alloc_own_lines(k.state_bytes)
        self.work = <uint8_t*>alloc_own_lines(k.state_bytes)
        self.legal = <int32_t*>alloc_own_lines(k.max_legal_actions * sizeof(int32_t))
        self.weights = <double*>alloc_own_lines(k.max_legal_actions * sizeof(double))
        self.legal_stamp = <uint32_t*>alloc_own_lines(k.num_distinct_actions * sizeof(uint32_t))
        self.seen_stamp = <uint32_t*>alloc_own_lines(k.num_distinct_actions * sizeof(uint32_t))
        self.cap_nodes = 1024 if max_nodes > 1024 else max_nodes
        self.node_block_mapped = 0
        self.node_block = <Node*>arena_resize(NULL, 0, _arena_bytes(self.cap_nodes),
                                              &self.node_block_mapped)
        self.links = <ChildLink*>alloc_own_lines(self.cap_nodes * sizeof(ChildLink))
        if (self.root == NULL or self.work == NULL or self.legal == NULL or self.weights == NULL
                or self.legal_stamp == NULL or self.seen_stamp == NULL or self.node_block == NULL
                or self.links == NULL):
            raise MemoryError()
        self.nodes = self.node_block + _guard_nodes()
        memcpy(self.root, root.buf, k.state_bytes)
        self.n_nodes = 1
        memset(&self.nodes[0], 0, sizeof(Node))
        self.nodes[0].parent = -1
        self.nodes[0].first_child = -1
        self.nodes[0].next_sibling = -1
        self.nodes[0].action = -1
        self.nodes[0].mover = -1
        self.links[0].next_sibling = -1
        self.links[0].action = -1
        self.stamp = 0
        self.cancelled = 0
        self.iterations_done = 0
        self.decisions_done = 0
        self.truncated = False
        self.exploration = 0.7
        self.margin_weight = 0.1
        self.margin_scale = 10.0
        self.paranoid = False
        self.widening_c = 0.0
        self.use_policy = True
        self.expand_policy = False
        self.policy = self.kernel.rollout_action
        self.model = NULL
        self.eval_plies = -1
        self.root_allowed = NULL
        self.seeded = False

    def __dealloc__(self):
        free(self.root_allowed)
        free(self.model)
        free(self.root)
        free(self.work)
        free(self.legal)
        free(self.weights)
        free(self.legal_stamp)
        free(self.seen_stamp)
        free(self.links)
        arena_free(self.node_block, _arena_bytes(self.cap_nodes), self.node_block_mapped)

    def set_model(self, w1, b1, w2, double b2, points_w=None, double points_b=0.0):
        """Install a value model (validated by the caller, hortus.search.evaluation): w1 is
        hidden x features (empty for a linear model), b1 hidden, w2 hidden (or features);
        points_w (features) and points_b: the optional linear head of a seat's expected final
        points, reported at a cut instead of the points so far."""
        cdef GameKernel* k = self.kernel
        cdef int hidden = len(b1), features = k.num_features, i, j
        if k.features == NULL or not 0 < features <= MAX_FEATURES:
            raise ValueError("this game has no value-model features")
        if not 0 <= hidden <= MAX_HIDDEN or len(w1) != hidden or len(w2) != (hidden or features):
            raise ValueError(f"value model shape does not fit {features} features")
        if self.model == NULL:
            self.model = <ValueModel*>alloc_own_lines(sizeof(ValueModel))
            if self.model == NULL:
                raise MemoryError()
        memset(self.model, 0, sizeof(ValueModel))
        self.model.features = features
        self.model.hidden = hidden
        for i in range(hidden):
            if len(w1[i]) != features:
                raise ValueError(f"value model shape does not fit {features} features")
            self.model.b1[i] = b1[i]
            for j in range(features):
                self.model.w1[i][j] = w1[i][j]
        for i in range(hidden or features):
            self.model.w2[i] = w2[i]
        self.model.b2 = b2
        if points_w is not None:
            if len(points_w) != features:
                raise ValueError(f"value model points head does not fit {features} features")
            self.model.has_points = True
            for j in range(features):
                self.model.pw[j] = points_w[j]
            self.model.pb = points_b

    def set_root_actions(self, actions):
        """What-if constraint (allow/avoid moves): the root expands only these legal action ids
        (checked by the caller, hortus.search.analysis), the rest of the tree is unconstrained;
        None lifts the mask. Set before the first run: existing root children are kept."""
        cdef GameKernel* k = self.kernel
        cdef int a
        free(self.root_allowed)
        self.root_allowed = NULL
        if actions is None:
            return
        self.root_allowed = <uint8_t*>alloc_own_lines(k.num_distinct_actions)
        if self.root_allowed == NULL:
            raise MemoryError()
        memset(self.root_allowed, 0, k.num_distinct_actions)
        for a in actions:
            if not 0 <= a < k.num_distinct_actions:
                raise ValueError(f"action {a} out of range")
            self.root_allowed[a] = 1

    def features(self, int seat):
        """The game's value-model features of the root from `seat`'s side (for training)."""
        cdef double f[MAX_FEATURES]
        cdef GameKernel* k = self.kernel
        if k.features == NULL:
            raise ValueError("this game has no value-model features")
        if not 0 <= seat < self.players:
            raise IndexError(seat)
        cdef int n = k.features(self.root, seat, f)
        return [f[i] for i in range(n)]

    def advance(self, KernelState new_root, actions):
        """Keep the subtree reached from the root by the decisions `actions` (in order; chance
        events are not in the tree) as the whole tree of `new_root`, the position those
        decisions led to, and drop the rest: a later run() continues it (tree reuse across
        consecutive decisions of one seat). Returns False, changing nothing, when a
        decision is not in the tree or `new_root` is not the observer's decision.

        The caller vouches that `new_root` is where `actions` lead from the root in the
        observer's information set (hortus.search.analysis checks the positions' bytes): the
        kept statistics came from determinizations of the root's information set.
        The compaction is in place and O(nodes): a node's parent always has a smaller index
        (children are appended), so one ascending pass finds every descendant and moves it down.
        """
        cdef GameKernel* k = self.kernel
        cdef int32_t node = 0, child, i, kept = 0, old
        cdef int32_t* remap
        cdef Node* n
        if new_root.kernel != k:
            raise ValueError("new_root belongs to another game")
        if k.current_player(new_root.buf) != self.observer:
            return False
        for a in actions:
            child = self.nodes[node].first_child
            while child != -1 and self.nodes[child].action != a:
                child = self.nodes[child].next_sibling
            if child == -1:
                return False
            node = child
        remap = <int32_t*>malloc(self.n_nodes * sizeof(int32_t))
        if remap == NULL:
            raise MemoryError()
        with nogil:
            for i in range(self.n_nodes):
                remap[i] = -1
            for i in range(node, self.n_nodes):
                old = self.nodes[i].parent
                if i != node and (old < 0 or remap[old] == -1):
                    continue
                remap[i] = kept
                if kept != i:
                    self.nodes[kept] = self.nodes[i]
                kept += 1
            for i in range(kept):
                n = &self.nodes[i]
                if i == 0:
                    n.parent = -1
                    n.next_sibling = -1
                    n.action = -1
                    n.mover = -1
                else:
                    n.parent = remap[n.parent]
                    if n.next_sibling != -1:
                        n.next_sibling = remap[n.next_sibling]
                if n.first_child != -1:
                    n.first_child = remap[n.first_child]
                self.links[i].next_sibling = n.next_sibling
                self.links[i].action = n.action
            free(remap)
            self.n_nodes = kept
            memcpy(self.root, new_root.buf, k.state_bytes)
        self.truncated = self.n_nodes >= self.max_nodes
        self.iterations_done = 0
        self.cancelled = 0
        free(self.root_allowed)   # a what-if mask belonged to the old root
        self.root_allowed = NULL
        return True

    def cancel(self):
        """Ask a running search to stop at its next iteration (safe from another thread)."""
        self.cancelled = 1

    def clear_cancel(self):
        """Let a cancelled search run again: a kept tree continued by a later call (the old
        call's cancel must not stop the new one)."""
        self.cancelled = 0

    cdef int32_t _new_child(self, int32_t parent, int32_t action, int mover) noexcept nogil:
        cdef Node* grown
        cdef ChildLink* grown_links
        cdef int32_t new_cap
        if self.n_nodes >= self.max_nodes:
            return -1
        if self.n_nodes == self.cap_nodes:
            new_cap = self.cap_nodes * 2
            if new_cap > self.max_nodes:
                new_cap = self.max_nodes
            grown_links = <ChildLink*>alloc_own_lines(new_cap * sizeof(ChildLink))
            if grown_links == NULL:
                return -1
            grown = <Node*>arena_resize(self.node_block, _arena_bytes(self.cap_nodes),
                                        _arena_bytes(new_cap), &self.node_block_mapped)
            if grown == NULL:
                free(grown_links)
                return -1
            self.node_block = grown  # the contents are kept, guard nodes included
            self.nodes = grown + _guard_nodes()
            memcpy(grown_links, self.links, self.cap_nodes * sizeof(ChildLink))
            free(self.links)
            self.links = grown_links
            self.cap_nodes = new_cap
        cdef int32_t c = self.n_nodes
        self.n_nodes += 1
        memset(&self.nodes[c], 0, sizeof(Node))
        self.nodes[c].parent = parent
        self.nodes[c].first_child = -1
        self.nodes[c].action = action
        self.nodes[c].mover = mover
        self.nodes[c].next_sibling = self.nodes[parent].first_child
        self.links[c].next_sibling = self.nodes[c].next_sibling
        self.links[c].action = action
        self.nodes[parent].first_child = c
        return c

    cdef void _iterate(self, Rng* rng) noexcept nogil:
        cdef GameKernel* k = self.kernel
        cdef uint8_t* s = self.work
        cdef int32_t node = 0, child, best, chosen
        cdef int p, n, i, untried, pick, j, steps = 0, n_children, played = 0
        cdef long decisions = 0
        cdef bint cut = False
        cdef double ucb, best_ucb, q, visits, log_avail, room, total
        cdef double exploration = self.exploration
        cdef double explore_sq = exploration * exploration
        cdef bint prune = PRUNE_SELECTION
        cdef int obs = self.observer
        cdef Node* c
        cdef bint expanded = False
        cdef double[MAX_PLAYERS] win
        cdef double[MAX_PLAYERS] banked
        cdef double[MAX_PLAYERS] pts
        cdef double* margin_pts = pts   # the points the reward's margin term uses
        cdef double[MAX_PLAYERS] reward
        cdef double best_other
        cdef int32_t* legal = self.legal
        cdef uint32_t* legal_stamp = self.legal_stamp
        cdef uint32_t* seen_stamp = self.seen_stamp
        cdef const ChildLink* links
        cdef int32_t action
        cdef uint32_t stamp
        cdef bint paranoid = self.paranoid
        cdef bint turn_max = self.turn_max
        cdef bint against

        memcpy(s, self.root, k.state_bytes)
        k.determinize(s, self.observer, rng)

        # Selection and expansion.
        while steps < k.max_game_length:
            p = k.current_player(s)
            if p == TERMINAL:
                break
            steps += 1
            if p == CHANCE:
                k.apply(s, sample_chance(k, s, self.legal, self.weights, rng))
                continue
            decisions += 1
            if node == 0 and self.root_allowed != NULL:
                # What-if root mask: every legal action the caller allowed (even one outside
                # the game's search subset: the caller asked for it), nothing else.
                n = k.legal_actions(s, self.legal)
                j = 0
                for i in range(n):
                    if self.root_allowed[self.legal[i]]:
                        self.legal[j] = self.legal[i]
                        j += 1
                n = j
            else:
                n = searched_actions(k, s, self.legal)
            if n <= 0:
                break   # contract violation guard: a decision node always has an action
            # (The loops below read the search's fields from locals: built with
            # -fno-strict-aliasing, every store to a node would otherwise reload them.)
            self.stamp += 1
            stamp = self.stamp
            for i in range(n):
                legal_stamp[legal[i]] = stamp
            untried = n
            n_children = 0
            best = -1
            best_ucb = -1e300
            against = paranoid and p != obs
            links = self.links      # (re-read: an expansion may have grown it)
            child = self.nodes[node].first_child
            while child != -1:
                action = links[child].action
                c = &self.nodes[child]
                n_children += 1
                if legal_stamp[action] == stamp:
                    c.availability += 1
                    seen_stamp[action] = stamp
                    untried -= 1
                    if c.visits > 0:
                        visits = <double>c.visits
                        log_avail = log_count(c.availability)
                        # A child that cannot beat the best so far is passed over without its
                        # UCB: q + exploration * sqrt(log_avail / visits) takes two divisions
                        # and a square root, which made most of selection's time in a large
                        # tree, and most children are not the best. The test (q's room below
                        # best_ucb, squared, against the exploration term squared) takes
                        # multiplications only, with a margin (UCB_SLACK) far above their
                        # rounding: it passes over only children whose UCB, computed in full,
                        # would not be above best_ucb, so the choice is the same bit for bit.
                        if turn_max and not against:
                            q = c.turn_value
                            room = best_ucb - q - UCB_SLACK * (fabs(best_ucb) + fabs(q))
                            if (prune and room > 0.0
                                    and room * room * visits > explore_sq * log_avail * (1.0 + UCB_SLACK)):
                                child = links[child].next_sibling
                                continue
                        else:
                            # Paranoid: every opponent plays to minimise the searcher's reward.
                            total = -c.reward[obs] if against else c.reward[p]
                            # (q's room times visits: no division)
                            room = (best_ucb * visits - total
                                    - UCB_SLACK * (fabs(best_ucb * visits) + fabs(total)))
                            if (prune and room > 0.0
                                    and room * room > explore_sq * log_avail * visits * (1.0 + UCB_SLACK)):
                                child = links[child].next_sibling
                                continue
                            q = total / visits
                        ucb = q + exploration * sqrt(log_avail / visits)
                    else:
                        ucb = 1e300
                    if ucb > best_ucb:
                        best_ucb = ucb
                        best = child
                child = links[child].next_sibling
            if (untried > 0 and best != -1 and self.widening_c > 0.0
                    and n_children >= self.widening_c * pow(self.nodes[node].visits + 1.0, WIDENING_ALPHA)):
                # Progressive widening: a node with many options grows its children with
                # its visits (C * visits^0.5) instead of trying every option once first.
                untried = 0
            if untried > 0:
                # Expand one untried legal action: the playout policy's choice when asked
                # (expand_policy) and it is untried here, so that a node not yet fully
                # expanded has its likely moves first; else one chosen uniformly.
                chosen = -1
                if self.expand_policy and self.policy != NULL:
                    pick = self.policy(s, rng)
                    if (0 <= pick < k.num_distinct_actions and legal_stamp[pick] == stamp
                            and seen_stamp[pick] != stamp):
                        chosen = pick
                if chosen == -1:
                    pick = rng_below(rng, untried)
                    j = 0
                    for i in range(n):
                        if seen_stamp[legal[i]] != stamp:
                            if j == pick:
                                chosen = legal[i]
                                break
                            j += 1
                child = self._new_child(node, chosen, p)
                k.apply(s, chosen)
                if child == -1:
                    self.truncated = True   # arena full: play out from here
                else:
                    self.nodes[child].availability = 1
                    node = child
                break
            node = best
            k.apply(s, self.nodes[best].action)

        # Playout (cut after eval_plies decisions when a value model is on).
        if (k.playout != NULL and k.rollout_action != NULL and self.use_policy
                and self.policy == k.rollout_action):
            # The same loop, fused in the game's kernel (GameKernel.playout).
            cut = k.playout(s, rng, &steps, k.max_game_length, self.eval_plies, &decisions) != 0
        else:
            while steps < k.max_game_length:
                p = k.current_player(s)
                if p == TERMINAL:
                    break
                steps += 1
                if p == CHANCE:
                    k.apply(s, sample_chance(k, s, self.legal, self.weights, rng))
                    continue
                if self.eval_plies >= 0 and played >= self.eval_plies:
                    cut = True
                    break
                played += 1
                decisions += 1
                if self.use_policy and self.policy != NULL:
                    k.apply(s, self.policy(s, rng))
                else:
                    n = searched_actions(k, s, self.legal)
                    if n <= 0:
                        break
                    k.apply(s, self.legal[rng_below(rng, n)])

        # Reward vector: win share plus a bounded score-margin term (hortus.search, "Search reward"; docs/search.md).
        for i in range(self.players):
            win[i] = 0.0
            pts[i] = 0.0
        if k.current_player(s) == TERMINAL:
            k.returns(s, win)
        k.scores(s, pts)
        if cut:
            # The reward's margin term keeps the points so far (`banked`), as when it was
            # measured; the statistics get the model's estimate of the final points
            # where it has a points head, so the expected points a hint reports are final.
            memcpy(banked, pts, self.players * sizeof(double))
            margin_pts = banked
            model_win_shares(k, self.model, s, self.players, win, pts)
        for i in range(self.players):
            best_other = -1e300
            for j in range(self.players):
                if j != i and margin_pts[j] > best_other:
                    best_other = margin_pts[j]
            if self.players == 1:
                best_other = 0.0
            reward[i] = win[i] + self.margin_weight * tanh((margin_pts[i] - best_other) / self.margin_scale)

        self.decisions_done += decisions
        # Backup along the path, root included.
        while node != -1:
            c = &self.nodes[node]
            c.visits += 1
            for i in range(self.players):
                c.reward[i] += reward[i]
                c.win[i] += win[i]
                c.score[i] += pts[i]
            if c.mover >= 0:
                c.mover_sq += reward[c.mover] * reward[c.mover]
                if self.turn_max:
                    self._turn_value(c)   # children first: the path is backed up leaf to root
            node = c.parent

    cdef void _turn_value(self, Node* c) noexcept nogil:
        """turn_max: a move's value for its seat is the better of its mean reward and the best
        turn_value among the seat's own next decisions below it (children chosen by the same
        seat, with at least max(turn_min_visits, visits / 8) visits).

        Why: where a seat makes several decisions in a row (a turn of many actions), the mean
        of a move searched little is dragged down because its later decisions in the turn are
        still made by the playout policy, while the move searched most has them searched. The
        first move to get a deep subtree then locks the search in (measured: 0.47 for the move searched 90,541 times against 0.22
        for one searched 1,138 times, and with another seed the reverse). Its best
        continuation is what the seat will actually play. The visit floor keeps a barely
        tried continuation's lucky mean from counting."""
        cdef double best = c.reward[c.mover] / c.visits
        cdef int32_t child = c.first_child
        cdef Node* g
        cdef uint32_t need = c.visits >> 3
        if need < self.turn_min_visits:
            need = self.turn_min_visits
        cdef const ChildLink* links = self.links
        while child != -1:
            g = &self.nodes[child]
            if g.mover == c.mover and g.visits >= need and g.turn_value > best:
                best = g.turn_value
            child = links[child].next_sibling   # (the next child's load waits for no node)
        c.turn_value = <float>best

    def run(self, long iterations=0, double time_ms=0.0, uint64_t seed=0,
            double exploration=0.7, double margin_weight=0.1, double margin_scale=10.0,
            bint paranoid=False, double widening_c=0.0,
            bint playout_policy=True, int eval_plies=-1, bint resume=False,
            bint expansion_policy=False, bint turn_max=False, int turn_min_visits=16,
            bint baseline_playout=False):
        """Iterate until `iterations` (if > 0), `time_ms` (if > 0) or cancel(); returns the count.

        At least one budget must be set. The RNG is seeded from `seed`, so one thread with an
        iteration budget is deterministic. resume: go on with the RNG where the previous run
        stopped (`seed` is then unused; the first run seeds it): a search run in pieces of
        N and M iterations is then exactly one run of N + M (an iteration depends only on the
        tree and the RNG), so a stream of snapshots or an analysis continued later (issue
        20: continue_from) gives what one run would. exploration: UCT constant. margin_weight and
        margin_scale: the reward's score-margin term. paranoid: opponents minimise the
        searching seat's reward instead of maximising their own (max^n). widening_c > 0 turns
        on progressive widening with at most widening_c * visits^0.5 children.
        playout_policy: play out with the game's rollout_action where it has one (else, and
        when False, uniformly over legal actions) — False measures what the policy is worth.
        eval_plies >= 0 (needs set_model): a playout stops after that many decisions and the
        value model scores the state (0 = at the new leaf); -1 plays every playout out.
        expansion_policy: a node expands the game's playout-policy choice first when that
        move is untried there (else a uniform untried one), instead of always uniformly.
        turn_max: selection values a move by its seat's best own continuation (_turn_value)
        rather than by its mean reward; turn_min_visits: the visits a continuation needs.
        A tree grown with turn_max off has no turn values: keep the setting within one tree.
        baseline_playout: the policy (playouts, and expansion_policy) is the game's
        baseline_rollout_action where it has one (the frozen baseline search), else its
        rollout_action.
        """
        if iterations <= 0 and time_ms <= 0.0:
            raise ValueError("set an iteration or a time budget")
        if margin_scale <= 0.0:
            raise ValueError("margin_scale must be > 0")
        if eval_plies >= 0 and (self.model == NULL or self.players < 2):
            raise ValueError("eval_plies needs a value model (set_model) and 2+ seats")
        self.eval_plies = eval_plies
        self.exploration = exploration
        self.margin_weight = margin_weight
        self.margin_scale = margin_scale
        self.paranoid = paranoid
        self.widening_c = widening_c
        self.use_policy = playout_policy
        self.expand_policy = expansion_policy
        if turn_min_visits < 1:
            raise ValueError("turn_min_visits must be >= 1")
        self.turn_max = turn_max
        self.turn_min_visits = turn_min_visits
        self.policy = self.kernel.rollout_action
        if baseline_playout and self.kernel.baseline_rollout_action != NULL:
            self.policy = self.kernel.baseline_rollout_action
        cdef long done = 0
        cdef double deadline = 0.0
        if not (resume and self.seeded):
            rng_seed(&self.rng, seed)
            self.seeded = True
        with nogil:
            if time_ms > 0.0:
                deadline = _now() + time_ms / 1000.0
            while not self.cancelled:
                if iterations > 0 and done >= iterations:
                    break
                # Checking the clock every few iterations keeps its cost invisible.
                if time_ms > 0.0 and (done & 7) == 0 and _now() >= deadline:
                    break
                self._iterate(&self.rng)
                done += 1
        self.iterations_done += done
        return done

    @property
    def num_features(self):
        """The game's value-model feature count (0 = no features function)."""
        return self.kernel.num_features if self.kernel.features != NULL else 0

    @property
    def node_count(self):
        return self.n_nodes

    @property
    def node_arena_mapped(self):
        """Whether the node arena is a mapping of its own (returned to the system when the
        search is freed); False while it is small, or where mappings are not used."""
        return bool(self.node_block_mapped)

    @property
    def memory_bytes(self):
        """Bytes this search holds: its node arena (as allocated, guards included) and the
        children's links, its state and scratch buffers and, when set, its value model and root
        mask."""
        cdef GameKernel* k = self.kernel
        cdef size_t total = _arena_bytes(self.cap_nodes) + self.cap_nodes * sizeof(ChildLink)
        total += 2 * k.state_bytes + k.max_legal_actions * (sizeof(int32_t) + sizeof(double))
        total += 2 * k.num_distinct_actions * sizeof(uint32_t)
        if self.model != NULL:
            total += sizeof(ValueModel)
        if self.root_allowed != NULL:
            total += k.num_distinct_actions
        return total

    @property
    def observer(self):
        return self.observer

    def children(self, int32_t node=0):
        """Statistics of a node's children: a list of dicts (sums, not means)."""
        if not 0 <= node < self.n_nodes:
            raise IndexError(node)
        out = []
        cdef int32_t child = self.nodes[node].first_child
        cdef Node* c
        cdef int i
        while child != -1:
            c = &self.nodes[child]
            out.append({
                "node": child,
                "action": c.action,
                "mover": c.mover,
                "visits": c.visits,
                "availability": c.availability,
                "reward": [c.reward[i] for i in range(self.players)],
                "win": [c.win[i] for i in range(self.players)],
                "score": [c.score[i] for i in range(self.players)],
                "mover_sq": c.mover_sq,
                "turn_value": c.turn_value,
            })
            child = c.next_sibling
        return out

    def root_visits(self):
        return self.nodes[0].visits


# ---------------------------------------------------------------------------------------------
# Exact solving of small positions (the analysis's solved path, hortus.search.analysis).
#
# When what remains of a game is small and nothing is hidden from any seat, the value of each
# root move is the expectimax value over the moves and the chance outcomes, found here by
# alpha-beta with Star1 pruning at chance nodes (Ballard 1983: a chance node's unseen
# outcomes are bounded by the value range, so it is cut once the outcomes seen decide it) and
# a transposition table of bounds keyed by the position's core bytes. Seat 0's win share is
# the value: one seat maximises it; of two seats (whose win shares sum to 1, the contract's
# returns) seat 0 maximises and seat 1 minimises it. Three or more seats have no single value
# (max^n depends on how ties are broken) and are not solved.
#
# Hidden information is learned from the contract alone: a position hides something from a
# seat when determinize(seat) changes its core bytes. The solve starts from a world
# determinized for the mover (so what it finds depends on the mover's information alone, even
# where a check were fooled) and gives up at the first position below it where any seat's
# determinize changes anything.

cdef enum:
    BOUND_EXACT = 0
    BOUND_LOWER = 1
    BOUND_UPPER = 2
    SOLVE_MAX_DEPTH = 256     # plies (decisions and chance events) below the root
    SOLVE_WORLDS = 3          # mover's worlds compared at the root

cdef enum SolveStatus:
    SOLVE_OK = 0
    SOLVE_NODES = 1           # the node budget ran out
    SOLVE_TIME = 2            # the deadline passed
    SOLVE_HIDDEN = 3          # a seat cannot see everything
    SOLVE_DEPTH = 4           # deeper than SOLVE_MAX_DEPTH
    SOLVE_CANCELLED = 5

SOLVE_STATUS = ("solved", "node budget", "deadline", "hidden information", "too deep", "cancelled")


ctypedef struct Bound:
    uint64_t key       # the core's first hash (the slot); 0 with check 0 = an empty slot
    uint64_t check     # a second hash of the core, never 0 in a used slot
    double value       # seat 0's win share: exact, a lower or an upper bound
    int32_t flag
    int32_t best       # the action that decided this decision node, -1 = none


cdef inline uint64_t _mix(uint64_t h, uint64_t w, uint64_t mul) noexcept nogil:
    h ^= w
    h *= mul
    return h ^ (h >> 29)


cdef class Solver:
    """Exact win shares of root moves for one and two seats, bounded by a node budget, a
    deadline and cancel(). Deterministic: the same root, actions and budget give the same
    answer (the clock only decides whether an answer comes)."""

    cdef GameKernel* kernel
    cdef object capsule
    cdef uint8_t* stack          # SOLVE_MAX_DEPTH + 1 state buffers
    cdef uint8_t* scratch        # the hidden-information check's buffer
    cdef int32_t* actions        # per depth: max_legal_actions
    cdef double* weights         # per depth: max_legal_actions
    cdef Bound* table
    cdef uint64_t table_mask
    cdef Rng check_rng
    cdef int players
    cdef int mover
    cdef long expanded
    cdef long max_nodes
    cdef double deadline
    cdef int stop_reason
    cdef int cancelled
    cdef bint prepared
    cdef bint hidden             # prepare() found something hidden at the root
    cdef PolicyFn policy

    def __cinit__(self, KernelState root, long table_entries=1 << 20):
        cdef GameKernel* k = root.kernel
        if k.current_player(root.buf) < 0:
            raise ValueError("the root must be a decision node (not chance, not terminal)")
        if table_entries < 1024:
            raise ValueError("table_entries must be >= 1024")
        self.kernel = k
        self.capsule = root.capsule
        self.players = k.num_players(root.buf)
        self.mover = k.current_player(root.buf)
        cdef uint64_t size = 1024
        while size < <uint64_t>table_entries:
            size <<= 1
        self.table_mask = size - 1
        self.stack = <uint8_t*>malloc((SOLVE_MAX_DEPTH + 1) * <size_t>k.state_bytes)
        self.scratch = <uint8_t*>malloc(k.state_bytes)
        self.actions = <int32_t*>malloc((SOLVE_MAX_DEPTH + 1) * <size_t>k.max_legal_actions * sizeof(int32_t))
        self.weights = <double*>malloc((SOLVE_MAX_DEPTH + 1) * <size_t>k.max_legal_actions * sizeof(double))
        # calloc: pages of an empty table are mapped only when a solve touches them
        self.table = <Bound*>calloc(size, sizeof(Bound))
        if self.stack == NULL or self.scratch == NULL or self.actions == NULL or self.weights == NULL or self.table == NULL:
            raise MemoryError()
        memcpy(self.stack, root.buf, k.state_bytes)
        self.policy = k.rollout_action
        self.prepared = False
        self.hidden = False
        self.stop_reason = SOLVE_OK
        self.cancelled = 0
        self.expanded = 0

    def __dealloc__(self):
        free(self.stack)
        free(self.scratch)
        free(self.actions)
        free(self.weights)
        free(self.table)

    def cancel(self):
        """Stop a running solve at its next node (safe from another thread)."""
        self.cancelled = 1

    @property
    def nodes(self):
        """Positions expanded by the solves so far (transposition hits not counted)."""
        return self.expanded

    cdef bint _hides(self, const uint8_t* s, int seat) noexcept nogil:
        """Whether determinize(seat) changes `s`'s core: something is hidden from `seat`."""
        cdef GameKernel* k = self.kernel
        memcpy(self.scratch, s, k.state_bytes)
        k.determinize(self.scratch, seat, &self.check_rng)
        return memcmp(self.scratch, s, k.core_bytes) != 0

    def prepare(self):
        """Check the root and make it the mover's world: False (and nothing to solve) when
        the mover's worlds differ or some seat cannot see everything in them. Uses only what
        the mover can see (its determinized worlds), never the root's hidden parts."""
        cdef GameKernel* k = self.kernel
        cdef int w, seat
        cdef bint same = True
        if self.prepared:
            return not self.hidden
        self.prepared = True
        with nogil:
            # world 0 in stack[0], each further world in scratch, compared with world 0
            rng_seed(&self.check_rng, 0x5EED)
            k.determinize(self.stack, self.mover, &self.check_rng)
            for w in range(1, SOLVE_WORLDS):
                if self._hides(self.stack, self.mover):
                    same = False
                    break
            if same:
                for seat in range(self.players):
                    if seat != self.mover and self._hides(self.stack, seat):
                        same = False
                        break
        if not same:
            self.stop_reason = SOLVE_HIDDEN
            self.hidden = True
        return same

    def estimate(self, int probes, uint64_t seed):
        """Knuth's estimate of the root's game tree (positions, every move and every chance
        outcome, before pruning and transpositions), averaged over `probes` random descents:
        cheap, for telling a position that cannot be solved in the budget at a glance."""
        cdef GameKernel* k = self.kernel
        cdef uint8_t* s = self.scratch
        cdef int32_t* acts = self.actions
        cdef double* ws = self.weights
        cdef Rng rng
        cdef double total = 0.0, product, size
        cdef int i, n, p, steps
        if not self.prepare():
            return float("inf")
        rng_seed(&rng, seed)
        with nogil:
            for i in range(probes):
                memcpy(s, self.stack, k.state_bytes)
                product = 1.0
                size = 1.0
                steps = 0
                while steps < k.max_game_length:
                    steps += 1
                    p = k.current_player(s)
                    if p == TERMINAL:
                        break
                    if p == CHANCE:
                        n = k.chance_outcomes(s, acts, ws)
                        if n <= 0:
                            break
                        product *= n
                        size += product
                        k.apply(s, sample_chance(k, s, acts, ws, &rng))
                    else:
                        n = searched_actions(k, s, acts)
                        if n <= 0:
                            break
                        product *= n
                        size += product
                        k.apply(s, acts[rng_below(&rng, n)])
                    if size > 1e300:
                        break
                total += size
        return total / probes if probes > 0 else 0.0

    def solve(self, actions, long max_nodes, double time_ms=0.0, bint policy_first=False, bint value_all=False):
        """The best of `actions` (legal at the root) for the mover, exactly: a list of
        (action, value, exact) in the order the moves were tried, where the best move's value
        (and that of any move found better than the moves before it) is its exact win share
        for the mover, and any other move's value is an upper bound that the best's value
        reaches (it is proved no better, not valued: the bound is what is known). When the
        budget (max_nodes positions more, `time_ms` if > 0), cancel() or hidden information
        stops it, the list holds the moves finished before, and ``status`` says why (it is
        "solved" when every move is in the list). The table of bounds is kept between
        calls: a later solve reuses what an earlier one found.

        The moves are tried in their order (policy_first: the playout policy's choice
        first): after the first, each move is searched with a null window at the best value so
        far (proving it no better is far cheaper than valuing it) and valued only when it
        turns out better, so of equally good moves the earliest is the best. value_all: every
        move is valued (each exact), for comparing a few moves rather than finding the best."""
        cdef GameKernel* k = self.kernel
        cdef int32_t a
        cdef double v, best = -1.0
        cdef bint first = True, valued
        if self.players > 2:
            raise ValueError("solving needs one or two seats")
        if not self.prepare():
            self.stop_reason = SOLVE_HIDDEN
            return []
        order = [int(x) for x in actions]
        if policy_first and self.policy != NULL:
            with nogil:
                a = self.policy(self.stack, &self.check_rng)
            if a in order:
                order.remove(a)
                order.insert(0, a)
        found = []
        self.max_nodes = self.expanded + max_nodes
        self.deadline = _now() + time_ms / 1000.0 if time_ms > 0.0 else 0.0
        self.stop_reason = SOLVE_OK
        for action in order:
            a = action
            valued = False
            with nogil:
                memcpy(self.stack + k.state_bytes, self.stack, k.state_bytes)
                k.apply(self.stack + k.state_bytes, a)
                if not first and not value_all:
                    # Better than `best`? Seat 0's window just above it (or, for seat 1, below).
                    if self.mover == 0:
                        v = self._value(1, best, best + 1e-9)
                    else:
                        v = 1.0 - self._value(1, 1.0 - best - 1e-9, 1.0 - best)
                if first or value_all or (self.stop_reason == SOLVE_OK and v > best):
                    # a window just outside [0, 1]: the value comes out exact
                    v = self._value(1, -1.0, 2.0)
                    if self.mover != 0:
                        v = 1.0 - v
                    if first or v > best:
                        best = v
                    first = False
                    valued = True
            if self.stop_reason != SOLVE_OK:
                break
            found.append((action, v, valued))
        return found

    def values(self, path, long max_nodes, double time_ms=0.0):
        """Seat 0's exact win share after each move, or each chance outcome, of the position
        that the actions `path` lead to from the root: a list of (action, probability, value),
        the probability 0.0 at a decision (its moves: the searched subset of the legal ones).
        Within max_nodes positions more and `time_ms` (if > 0); the table of bounds is shared
        with (and warmed by) the solves before. [] when the budget, cancel() or hidden
        information stops it (``status`` says why), or at the end of the game. Raises
        ValueError for an action of `path` that is not legal where it is applied."""
        cdef GameKernel* k = self.kernel
        cdef size_t sb = k.state_bytes
        cdef int depth = 0, n, i, seat, player
        cdef int32_t* acts
        cdef double* ws
        cdef double total = 0.0, v
        cdef uint8_t* s
        if self.players > 2:
            raise ValueError("solving needs one or two seats")
        if not self.prepare():
            self.stop_reason = SOLVE_HIDDEN
            return []
        steps = [int(a) for a in path]
        if len(steps) + 2 > SOLVE_MAX_DEPTH:
            raise ValueError("the path is too long")
        self.stop_reason = SOLVE_OK
        for a in steps:
            s = self.stack + depth * sb
            acts = self.actions + depth * <size_t>k.max_legal_actions
            ws = self.weights + depth * <size_t>k.max_legal_actions
            player = k.current_player(s)
            if player == TERMINAL:
                raise ValueError(f"path[{depth}]: the game is over")
            if player == CHANCE:
                n = k.chance_outcomes(s, acts, ws)
            else:
                for seat in range(self.players):
                    if self._hides(s, seat):
                        self.stop_reason = SOLVE_HIDDEN
                        return []
                n = k.legal_actions(s, acts)
            if a not in [acts[i] for i in range(n)]:
                raise ValueError(f"path[{depth}]: action {a} is not legal there")
            memcpy(s + sb, s, sb)
            k.apply(s + sb, a)
            depth += 1
        s = self.stack + depth * sb
        acts = self.actions + depth * <size_t>k.max_legal_actions
        ws = self.weights + depth * <size_t>k.max_legal_actions
        player = k.current_player(s)
        if player == TERMINAL:
            return []
        if player == CHANCE:
            n = k.chance_outcomes(s, acts, ws)
            for i in range(n):
                total += ws[i]
        else:
            for seat in range(self.players):
                if self._hides(s, seat):
                    self.stop_reason = SOLVE_HIDDEN
                    return []
            n = searched_actions(k, s, acts)
        # the children are valued one by one at depth + 1, which reuses no buffer of this depth's
        children = [(acts[i], ws[i] / total if player == CHANCE else 0.0) for i in range(n)]
        self.max_nodes = self.expanded + max_nodes
        self.deadline = _now() + time_ms / 1000.0 if time_ms > 0.0 else 0.0
        out = []
        cdef int32_t child_action
        for action, probability in children:
            child_action = action
            with nogil:
                memcpy(s + sb, s, sb)
                k.apply(s + sb, child_action)
                # a window just outside [0, 1]: the value comes out exact
                v = self._value(depth + 1, -1.0, 2.0)
            if self.stop_reason != SOLVE_OK:
                return []
            out.append((action, probability, v))
        return out

    @property
    def status(self):
        """Why the last solve stopped: "solved", "node budget", "deadline", "hidden
        information", "too deep" or "cancelled"."""
        return SOLVE_STATUS[self.stop_reason]

    cdef Bound* _slot(self, const uint8_t* s, uint64_t* check) noexcept nogil:
        cdef int n = self.kernel.core_bytes, i
        cdef uint64_t h1 = 0x243F6A8885A308D3ULL, h2 = 0x13198A2E03707344ULL, w
        i = 0
        while i + 8 <= n:
            memcpy(&w, s + i, 8)
            h1 = _mix(h1, w, 0x9E3779B97F4A7C15ULL)
            h2 = _mix(h2, w, 0xC2B2AE3D27D4EB4FULL)
            i += 8
        if i < n:
            w = 0
            memcpy(&w, s + i, n - i)
            h1 = _mix(h1, w, 0x9E3779B97F4A7C15ULL)
            h2 = _mix(h2, w, 0xC2B2AE3D27D4EB4FULL)
        check[0] = h2 | 1
        return &self.table[h1 & self.table_mask]

    cdef bint _stop(self) noexcept nogil:
        self.expanded += 1
        if self.expanded > self.max_nodes:
            self.stop_reason = SOLVE_NODES
        elif self.cancelled:
            self.stop_reason = SOLVE_CANCELLED
        elif self.deadline > 0.0 and (self.expanded & 15) == 0 and _now() > self.deadline:
            self.stop_reason = SOLVE_TIME
        return self.stop_reason != SOLVE_OK

    cdef double _value(self, int depth, double alpha, double beta) noexcept nogil:
        """Seat 0's win share at stack[depth], fail-hard within (alpha, beta): a result <=
        alpha is an upper bound, >= beta a lower bound, strictly inside the exact value."""
        cdef GameKernel* k = self.kernel
        cdef uint8_t* s = self.stack + depth * <size_t>k.state_bytes
        cdef uint8_t* child = s + k.state_bytes
        cdef int32_t* acts = self.actions + depth * <size_t>k.max_legal_actions
        cdef double* ws = self.weights + depth * <size_t>k.max_legal_actions
        cdef double r[MAX_PLAYERS]
        cdef double a0 = alpha, b0 = beta, v, cv, total, p, seen, left, ca, cb
        cdef uint64_t check
        cdef Bound* slot
        cdef int n, i, seat, player = k.current_player(s)
        cdef int32_t best = -1, hint = -1
        cdef bint maximise, cut
        if player == TERMINAL:
            k.returns(s, r)
            return r[0]
        slot = self._slot(s, &check)
        if slot.check == check:
            if (slot.flag == BOUND_EXACT or (slot.flag == BOUND_LOWER and slot.value >= beta)
                    or (slot.flag == BOUND_UPPER and slot.value <= alpha)):
                return slot.value
            hint = slot.best
        if self._stop():
            return 0.0
        if depth >= SOLVE_MAX_DEPTH:
            self.stop_reason = SOLVE_DEPTH
            return 0.0
        if player == CHANCE:
            n = k.chance_outcomes(s, acts, ws)
            total = 0.0
            for i in range(n):
                total += ws[i]
            seen = 0.0
            left = 1.0
            cut = False
            v = 0.0
            for i in range(n):
                p = ws[i] / total
                left -= p
                if left < 0.0:
                    left = 0.0
                # Star1: the window this outcome must fall in for the node to land inside
                # (alpha, beta), the unseen outcomes taken at the ends of [0, 1]
                ca = (alpha - seen - left) / p
                cb = (beta - seen) / p
                if cb <= 0.0:
                    v = seen              # the outcomes seen reach beta: a lower bound >= beta
                    cut = True
                    break
                if ca >= 1.0:
                    v = seen + p + left   # a win in every outcome left stays <= alpha
                    cut = True
                    break
                # (an empty window would let a child's cut pass for a bound it is not)
                if ca < 0.0:
                    ca = 0.0
                if cb > 1.0:
                    cb = 1.0
                memcpy(child, s, k.state_bytes)
                k.apply(child, acts[i])
                cv = self._value(depth + 1, ca, cb)
                if self.stop_reason != SOLVE_OK:
                    return 0.0
                seen += p * cv
                if cv <= ca and ca > 0.0:
                    v = seen + left       # fails low: an upper bound <= alpha
                    cut = True
                    break
                if cv >= cb and cb < 1.0:
                    v = seen              # fails high: a lower bound >= beta
                    cut = True
                    break
            if not cut:
                v = seen
        else:
            # Nothing may be hidden from any seat below the root (the root was checked).
            for seat in range(self.players):
                if self._hides(s, seat):
                    self.stop_reason = SOLVE_HIDDEN
                    return 0.0
            n = searched_actions(k, s, acts)
            if n <= 0:
                k.returns(s, r)   # contract violation guard: a decision with no action
                return r[0]
            # Move ordering: the move that decided this position before, else the playout
            # policy's choice (cheap game knowledge), first.
            if hint < 0 and self.policy != NULL:
                hint = self.policy(s, &self.check_rng)
            for i in range(n):
                if acts[i] == hint:
                    acts[i] = acts[0]
                    acts[0] = hint
                    break
            maximise = player == 0
            v = 0.0 if maximise else 1.0
            for i in range(n):
                memcpy(child, s, k.state_bytes)
                k.apply(child, acts[i])
                cv = self._value(depth + 1, alpha, beta)
                if self.stop_reason != SOLVE_OK:
                    return 0.0
                if maximise:
                    if cv > v or best < 0:
                        v = cv
                        best = acts[i]
                    if v > alpha:
                        alpha = v
                else:
                    if cv < v or best < 0:
                        v = cv
                        best = acts[i]
                    if v < beta:
                        beta = v
                # a win share cannot pass 1 nor fall below 0: nothing better can follow
                if alpha >= beta or (maximise and v >= 1.0) or (not maximise and v <= 0.0):
                    break
        slot.key = 1
        slot.check = check
        slot.value = v
        slot.best = best
        if v <= a0:
            slot.flag = BOUND_UPPER
        elif v >= b0:
            slot.flag = BOUND_LOWER
        else:
            slot.flag = BOUND_EXACT
        return v
