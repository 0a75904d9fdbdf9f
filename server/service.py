"""``hortus.v1.Advisor``: the gRPC servicer. Game-agnostic: every game is reached through the
``hortus.games`` registry, every search through ``hortus.search.analyze``.

Stateless: each request carries its position (``Position.encoded`` = ``State.encode()`` bytes),
decoded and validated before any compiled code reads it.
"""

from __future__ import annotations

from hortus.server.batch import BatchRpcs
from hortus.server.messages import analysis_message, game_info, position_info
from hortus.server.positions import PositionRpcs
from hortus.server.requests import PROTOCOL, SERVICE_NAME, SearchListener
from hortus.server.slots import SearchSlots
from hortus.server.reviewing import ReviewRpcs
from hortus.server.searching import SearchRpcs
from hortus.server.simulate import SimulateRpcs
from hortus.server.sealed_rpcs import SealedRpcs
from hortus.v1 import advisor_pb2_grpc

__all__ = [
    "PROTOCOL",
    "SERVICE_NAME",
    "AdvisorServicer",
    "SearchListener",
    "SearchSlots",
    "analysis_message",
    "game_info",
    "position_info",
]


class AdvisorServicer(
    SealedRpcs, PositionRpcs, SearchRpcs, BatchRpcs, ReviewRpcs, SimulateRpcs, advisor_pb2_grpc.AdvisorServicer
):
    """Implements ``hortus.v1.Advisor`` (see ``proto/hortus/v1/advisor.proto``): the RPC families,
    each in its own module over the shared request preparation of ``hortus.server.requests``;
    ``SealedRpcs`` first, so that sealed positions are opened, and answers about them kept to
    what their seat may see, around every family."""
