"""One batch call's bookkeeping (EvaluatePositions, EvaluateBatch, ReviewGame): the window of
positions accepted and not yet answered, each answered exactly once, by its deadline."""

from __future__ import annotations

import queue
import threading

from hortus.search import (
    SearchHandle,
)
from hortus.server.errors import (
    NoAnswerError,
    error_answer,
)
from hortus.v1 import advisor_pb2 as pb

_READER_DONE = object()


def _error_response(position_id: str, exc: BaseException) -> pb.EvaluateResponse:
    """A batch position's answer that is an error (code, message, field)."""
    code, message, field = error_answer(exc, "EvaluatePositions")
    return pb.EvaluateResponse(id=position_id, error=pb.EvaluateError(code=code.name, message=message, field=field))


class BatchCall:
    """The shared state of one EvaluatePositions call.

    Each accepted position gets a token and stays *pending* until its one answer is put on
    ``results`` (``answer``): by its search, or, for a position that has no search slot yet
    when the deadline comes close, by ``expire``. A position *claims* its slot (``claim``)
    once it holds one, after which only its search answers it."""

    def __init__(self, window: int, reserve_ms: float = 0.0) -> None:
        self.window = threading.Semaphore(window)
        self.reserve_ms = reserve_ms
        self.results: queue.Queue[object] = queue.Queue()  # at most `window` answers + 1 marker
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.submitted = 0
        self.over_cap = False
        self.closed = False  # the answers are done: accept nothing more
        self.half_closed = False  # the client sent its last position
        self.expired = False  # the deadline is close: unsearched positions get DEADLINE_EXCEEDED
        self._pending: dict[int, str] = {}  # token -> the position's id
        self._searching: set[int] = set()  # pending tokens holding a search slot
        self._handles: set[SearchHandle] = set()

    def add(self, request: pb.EvaluateRequest) -> int | None:
        """Accept a position (call with ``lock`` held): its token, or None when the call has
        expired, in which case it is answered DEADLINE_EXCEEDED right here."""
        self.submitted += 1
        if self.expired:
            self.results.put(_error_response(request.id, deadline_error()))
            return None
        token = self.submitted
        self._pending[token] = request.id
        return token

    def request_id(self, token: int) -> str:
        with self.lock:
            return self._pending.get(token, "")

    def is_pending(self, token: int) -> bool:
        with self.lock:
            return token in self._pending

    def claim(self, token: int) -> bool:
        """The position holds a search slot: only its search answers it from now on (False if
        it was answered meanwhile)."""
        with self.lock:
            if token not in self._pending:
                return False
            self._searching.add(token)
            return True

    def answer(self, token: int, response: pb.EvaluateResponse) -> bool:
        """Put the position's answer, if it has none yet."""
        with self.lock:
            if self._pending.pop(token, None) is None:
                return False
            self._searching.discard(token)
            self.results.put(response)
            return True

    def expire(self) -> None:
        """The call's deadline is close: answer every position without a search slot
        DEADLINE_EXCEEDED now, and stop the running searches (each answers at once with what it
        found; their budgets normally ended already)."""
        with self.lock:
            self.expired = True
            for token in [t for t in self._pending if t not in self._searching]:
                self.results.put(_error_response(self._pending.pop(token), deadline_error()))
            for handle in self._handles:
                handle.cancel()

    def track(self, handle: SearchHandle) -> None:
        with self.lock:
            self._handles.add(handle)
            if self.stop.is_set():
                handle.cancel()

    def untrack(self, handle: SearchHandle) -> None:
        with self.lock:
            self._handles.discard(handle)

    def end(self) -> None:
        """The call is over (done, cancelled, deadline): stop its searches."""
        with self.lock:
            self.stop.set()
            for handle in self._handles:
                handle.cancel()


def deadline_error() -> NoAnswerError:
    return NoAnswerError("the call's deadline came before a search slot was free for this position")
