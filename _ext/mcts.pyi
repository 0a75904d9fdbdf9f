from typing import Any

from hortus._ext.engine import KernelState

class Search:
    iterations_done: int
    decisions_done: int
    truncated: bool
    def __new__(cls, root: KernelState, max_nodes: int = ...) -> Search: ...
    def cancel(self) -> None: ...
    def clear_cancel(self) -> None: ...
    def run(
        self,
        iterations: int = ...,
        time_ms: float = ...,
        seed: int = ...,
        exploration: float = ...,
        margin_weight: float = ...,
        margin_scale: float = ...,
        paranoid: bool = ...,
        widening_c: float = ...,
        playout_policy: bool = ...,
        eval_plies: int = ...,
        resume: bool = ...,
        expansion_policy: bool = ...,
        turn_max: bool = ...,
        turn_min_visits: int = ...,
        baseline_playout: bool = ...,
    ) -> int: ...
    def advance(self, new_root: KernelState, actions: list[int]) -> bool: ...
    def set_model(
        self,
        w1: list[list[float]],
        b1: list[float],
        w2: list[float],
        b2: float,
        points_w: list[float] | None = None,
        points_b: float = 0.0,
    ) -> None: ...
    def set_root_actions(self, actions: list[int] | None) -> None: ...
    def features(self, seat: int) -> list[float]: ...
    @property
    def num_features(self) -> int: ...
    @property
    def node_count(self) -> int: ...
    @property
    def node_arena_mapped(self) -> bool: ...
    @property
    def memory_bytes(self) -> int: ...
    @property
    def observer(self) -> int: ...
    def children(self, node: int = ...) -> list[dict[str, Any]]: ...
    def root_visits(self) -> int: ...
