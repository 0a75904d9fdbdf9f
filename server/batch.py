"""Batch RPCs: EvaluatePositions (bidirectional) and EvaluateBatch (a server stream), every
accepted position answered exactly once, by its deadline."""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections.abc import Iterator
from concurrent import futures

import grpc
from hortus.search import (
    SearchHandle,
)
from hortus.server.batch_call import _READER_DONE, BatchCall, _error_response
from hortus.server.errors import (
    RequestError,
    ShuttingDownError,
    status_for,
)
from hortus.server.messages import analysis_message
from hortus.server.requests import (
    MAX_ID_BYTES,
    ServicerCore,
    check_bytes,
)
from hortus.v1 import advisor_pb2 as pb


class BatchRpcs(ServicerCore):
    """EvaluatePositions, EvaluateBatch."""

    def _evaluate_one(self, request: pb.EvaluateRequest, context: grpc.ServicerContext, call: "BatchCall", token: int) -> None:
        """One position of a batch: its analysis, or its error, as its one answer (nothing if
        the call answered it already, DEADLINE_EXCEEDED, while it waited)."""
        if not call.is_pending(token):  # expired while queued: already answered
            return
        try:
            self.check_size(request)
            check_bytes("id", request.id, MAX_ID_BYTES, "MAX_ID_BYTES")
            state, _ = self._prepare(request.position, request.limits, context)  # validates the limits too
            handle = SearchHandle()
            call.track(handle)
            try:
                searched = self._run_batch(state, request, context, handle, call, token)
            finally:
                call.untrack(handle)
            if searched is None:
                return
            analysis, partial = searched
            answer = pb.EvaluateResponse(id=request.id, analysis=analysis_message(state, analysis, partial, request.max_moves))
        except Exception as exc:  # noqa: BLE001 - an error is an answer
            answer = _error_response(request.id, exc)
        call.answer(token, answer)

    def EvaluatePositions(
        self, request_iterator: Iterator[pb.EvaluateRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.EvaluateResponse]:
        """Every accepted position answered exactly once, in completion order, at most
        ``window`` accepted and unanswered at a time (bounded buffering), and before the
        call's deadline: positions still waiting for a search slot (or for a thread of the
        batch pool) when the deadline comes close are answered DEADLINE_EXCEEDED by the call
        itself, searches running then are stopped with what they found, and positions
        arriving later are answered DEADLINE_EXCEEDED at once. While the server drains, no new
        position is accepted: once the accepted ones are answered the call ends UNAVAILABLE,
        and the client sends the rest elsewhere."""
        call, give_up_at = self._batch_call(context)
        cap = self.config.max_batch_size

        def finish(token: int, future: "futures.Future[None]") -> None:
            if future.cancelled() or future.exception() is not None:  # the pool was shut down
                error = ShuttingDownError("the server is shutting down: send this position again")
                call.answer(token, _error_response(call.request_id(token), error))

        def read() -> None:
            accepted = 0
            try:
                for request in request_iterator:
                    while not call.window.acquire(timeout=0.05):
                        if call.stop.is_set():
                            return
                    with call.lock:
                        if call.closed or self.draining.is_set():
                            call.window.release()
                            return
                        if accepted >= cap:
                            call.window.release()
                            call.over_cap = True
                            return
                        accepted += 1
                        token = call.add(request)
                    if token is None:  # the deadline is close: answered DEADLINE_EXCEEDED at once
                        continue
                    try:
                        future = self._batch_pool.submit(self._evaluate_one, request, context, call, token)
                    except RuntimeError:  # the pool is shut down: an answer all the same
                        error = ShuttingDownError("the server is shutting down: send this position again")
                        call.answer(token, _error_response(request.id, error))
                    else:
                        future.add_done_callback(functools.partial(finish, token))
                call.half_closed = True
            except Exception:  # noqa: BLE001 - the client went away while we were reading
                call.end()
            finally:
                call.results.put(_READER_DONE)

        threading.Thread(target=read, name="hortus-batch-reader", daemon=True).start()
        answered = 0
        reader_done = False
        while True:
            with call.lock:
                if answered >= call.submitted and (reader_done or self.draining.is_set()):
                    call.closed = True  # the reader accepts nothing more
                    break
            timeout = 0.1
            if give_up_at is not None and not call.expired:
                left = give_up_at - time.monotonic()
                if left <= 0:
                    call.expire()
                    continue
                timeout = min(timeout, left)
            try:
                item = call.results.get(timeout=timeout)
            except queue.Empty:
                continue
            if item is _READER_DONE:
                reader_done = True
                continue
            answered += 1
            assert isinstance(item, pb.EvaluateResponse)
            yield item
            call.window.release()
        if call.over_cap:
            context.abort_with_status(
                status_for(RequestError("id", f"more positions than the server cap max_batch_size={cap} in one call"))
            )
        if not call.half_closed and self.draining.is_set():
            context.abort_with_status(
                status_for(ShuttingDownError("the server is shutting down: send the unanswered positions again"))
            )

    def EvaluateBatch(self, request: pb.EvaluateBatchRequest, context: grpc.ServicerContext) -> Iterator[pb.EvaluateResponse]:
        """``EvaluatePositions`` over a server stream (browsers cannot stream requests): the
        same answers, exactly once each in completion order, the same window and drain. The
        batch cap is checked before any search, since the whole batch is already here."""
        try:
            self.check_accepting()
            self.check_size(request)
            cap = self.config.max_batch_size
            if len(request.positions) > cap:
                raise RequestError("positions", f"{len(request.positions)} positions exceed the server cap max_batch_size={cap}")
        except Exception as exc:  # noqa: BLE001 - mapped to a status right here
            context.abort_with_status(status_for(exc, "EvaluateBatch"))
        yield from self.EvaluatePositions(iter(request.positions), context)

    # --- ReviewGame ------------------------------------------------------------------------
