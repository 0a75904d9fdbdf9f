from typing import Any

from hortus._ext.engine import KernelState

class Search:
    iterations_done: int
    truncated: bool
    def __init__(self, root: KernelState, max_nodes: int = ...) -> None: ...
    def cancel(self) -> None: ...
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
        widening_alpha: float = ...,
        playout_policy: bool = ...,
    ) -> int: ...
    @property
    def node_count(self) -> int: ...
    @property
    def observer(self) -> int: ...
    def children(self, node: int = ...) -> list[dict[str, Any]]: ...
    def root_visits(self) -> int: ...
