"""The picture request's checked parts: the last turn's moves (LegalActionsRequest.last) the
picture marks (``hortus.games.svg.Last``)."""

from __future__ import annotations

from hortus.games.svg import Last
from hortus.server.errors import RequestError
from hortus.server.requests import MAX_NOTATION_BYTES, check_bytes
from hortus.v1 import advisor_pb2 as pb

MAX_LAST_MOVES = 64  # a whole turn of the longest game (War of the Posies: about 8 actions)


def last_moves(request: pb.LegalActionsRequest, players: int) -> Last | None:
    """``request.last`` checked (INVALID_ARGUMENT naming the field), None when unset. A
    notation is only matched against the picture's elements, never applied: one that names
    nothing marks nothing."""
    if not request.HasField("last"):
        return None
    last = request.last
    if not 0 <= last.seat < players:
        raise RequestError("last.seat", f"seat {last.seat} is not in 0..{players - 1}")
    if len(last.notations) > MAX_LAST_MOVES:
        raise RequestError("last.notations", f"{len(last.notations)} moves exceed {MAX_LAST_MOVES}")
    for i, text in enumerate(last.notations):
        check_bytes(f"last.notations[{i}]", text, MAX_NOTATION_BYTES, "notation bytes")
    return Last(last.seat, tuple(last.notations))
