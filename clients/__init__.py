"""Thin clients of the hortus advisor service and the ``hortus`` command line.

Imports only grpc, protobuf, ``hortus.v1`` and the standard library: a frontend can use it
without the engine installed or loaded.

```python
from hortus.clients import AdvisorClient
with AdvisorClient("127.0.0.1:50051", timeout=10) as client:
    info = client.new_game("botanik", seed=1)
    print(client.suggest_move(info.position, iterations=2000).action)
```
"""

from __future__ import annotations

from hortus.clients.client import (
    DEFAULT_TARGET,
    DEFAULT_TIMEOUT,
    ActionLike,
    AdvisorClient,
    AdvisorMethods,
    AsyncAdvisorClient,
    EvaluationInput,
    TlsConfig,
    channel_target,
    service_config,
)
from hortus.clients.errors import (
    AdvisorError,
    DeadlineExceededError,
    FailedPreconditionError,
    FieldViolation,
    InvalidArgumentError,
    NotFoundError,
    QuotaViolation,
    ResourceExhaustedError,
    UnavailableError,
    error_from_rpc,
)
from hortus.clients.record import (
    GameRecord,
    RecordedAction,
    RecordError,
    ReviewedMove,
    ReviewSummary,
    ReviewThresholds,
    SeatReview,
)
from hortus.clients.simulation import SeatCountReport, SimulatedGame, SimulationReport
from hortus.clients.types import (
    CHANCE,
    TERMINAL,
    Action,
    Analysis,
    AnalysisUpdate,
    ChanceDraw,
    ChanceOutcome,
    EvaluationError,
    EvaluationItem,
    EvaluationResult,
    GameInfo,
    LegalActions,
    MoveHint,
    Position,
    PositionInfo,
    RuleOption,
    Suggestion,
    VersionInfo,
)

__all__ = [
    "CHANCE",
    "DEFAULT_TARGET",
    "DEFAULT_TIMEOUT",
    "AnalysisUpdate",
    "EvaluationError",
    "EvaluationInput",
    "EvaluationItem",
    "EvaluationResult",
    "TlsConfig",
    "channel_target",
    "service_config",
    "TERMINAL",
    "Action",
    "ActionLike",
    "AdvisorClient",
    "AdvisorError",
    "AdvisorMethods",
    "Analysis",
    "AsyncAdvisorClient",
    "ChanceDraw",
    "ChanceOutcome",
    "DeadlineExceededError",
    "FailedPreconditionError",
    "FieldViolation",
    "GameInfo",
    "GameRecord",
    "RecordError",
    "RecordedAction",
    "ReviewSummary",
    "ReviewThresholds",
    "ReviewedMove",
    "SeatCountReport",
    "SeatReview",
    "SimulatedGame",
    "SimulationReport",
    "InvalidArgumentError",
    "LegalActions",
    "MoveHint",
    "NotFoundError",
    "Position",
    "PositionInfo",
    "QuotaViolation",
    "ResourceExhaustedError",
    "RuleOption",
    "Suggestion",
    "UnavailableError",
    "VersionInfo",
    "error_from_rpc",
]
