"""Balance simulation: SimulateGames, seeded self-play of one game and its balance report
(``hortus.balance``), each finished game sent as it comes, then the report.

Game-agnostic: the games are ``hortus.balance.play`` tasks, each played in a batch slot (as a
batch position's search), so a long simulation never starves interactive searches.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent import futures

import grpc
from hortus.balance.play import Change, GameRecord, GameTask, Stopped, play_one
from hortus.balance.report import report_dict, report_json, report_tasks, seat_reports_of
from hortus.games import Game
from hortus.search.levels import LEVELS
from hortus.server.batch_call import BatchCall
from hortus.server.errors import NoAnswerError, RequestError, ShuttingDownError, status_for
from hortus.server.requests import MAX_NAME_BYTES, ServicerCore, check_bytes
from hortus.v1 import advisor_pb2 as pb

__all__ = ["SimulateRpcs"]

DEFAULT_LEVEL = 4


class SimulateRpcs(ServicerCore):
    """SimulateGames."""

    def _simulation(self, request: pb.SimulateGamesRequest) -> tuple[Game, list[int], int, Change]:
        """The request checked field by field before any game is played: the game, its seat
        counts, the level, the rule options (the caps: the level's iterations against
        max_iterations, all games against max_batch_size)."""
        game = self._game(request.game, "game")
        players = [int(p) for p in request.players] or [game.min_players]
        for i, count in enumerate(players):
            if not game.min_players <= count <= game.max_players:
                raise RequestError(
                    f"players[{i}]", f"{game.name} takes {game.min_players}-{game.max_players} players, not {count}"
                )
            if count in players[:i]:
                raise RequestError(f"players[{i}]", f"seat count {count} is given twice")
        level = int(request.level) or DEFAULT_LEVEL
        if level not in LEVELS:
            raise RequestError("level", f"difficulty level must be 1..{len(LEVELS)}, not {level}")
        iterations = LEVELS[level].iterations
        if iterations > self.config.max_iterations:
            raise RequestError(
                "level", f"level {level} searches {iterations} iterations a decision, over the server cap max_iterations"
            )
        if request.games < 1:
            raise RequestError("games", f"play at least 1 game per seat count, not {request.games}")
        total = int(request.games) * len(players)
        if total > self.config.max_batch_size:
            raise RequestError("games", f"{total} games in all exceed the server cap max_batch_size={self.config.max_batch_size}")
        for name, value in request.options.items():
            check_bytes("options", name, MAX_NAME_BYTES, "MAX_NAME_BYTES")
            check_bytes(f"options[{name}]", value, MAX_NAME_BYTES, "MAX_NAME_BYTES")
        try:
            options = game.resolve_options(dict(request.options)) if request.options else {}
        except ValueError as exc:
            raise RequestError("options", str(exc)) from exc
        return game, players, level, Change(options=tuple(sorted(options.items())))

    def _simulate_one(self, task: GameTask, call: BatchCall) -> GameRecord | None:
        """One game in a batch slot (waited for); None when the call ended first."""
        while not self._slots.acquire_batch(timeout=0.02):
            if call.stop.is_set():
                return None
        try:
            if call.stop.is_set():
                return None
            self._searching(+1)
            try:
                return play_one(task, stop=call.stop.is_set)
            except Stopped:
                return None
            finally:
                self._searching(-1)
        finally:
            self._slots.release(batch=True)

    def SimulateGames(
        self, request: pb.SimulateGamesRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.SimulateGamesResponse]:
        """Play the games (at most ``window`` at a time, each in a batch slot), send each one
        as it finishes, then the report. At the deadline the games still running are given
        up, the finished ones have been sent, and the call ends DEADLINE_EXCEEDED."""
        try:
            self.check_accepting()
            self.check_size(request)
            game, players, level, base = self._simulation(request)
        except Exception as exc:  # noqa: BLE001 - mapped to a status right here
            context.abort_with_status(status_for(exc, "SimulateGames"))
        bot = f"level:{level}"
        seed = int(request.seed)
        tasks = report_tasks(game.name, players, bot, int(request.games), seed, base)
        call, give_up_at = self._batch_call(context)
        window = self.config.window
        waiting = iter(tasks)
        pending: set[futures.Future[GameRecord | None]] = set()
        records: list[GameRecord] = []
        try:
            while True:
                while len(pending) < window:
                    task = next(waiting, None)
                    if task is None:
                        break
                    try:
                        pending.add(self._batch_pool.submit(self._simulate_one, task, call))
                    except RuntimeError:  # the pool is shut down
                        raise ShuttingDownError("the server is shutting down: send the simulation again") from None
                if not pending:
                    break
                timeout = None if give_up_at is None else max(0.0, give_up_at - time.monotonic())
                done, pending = futures.wait(pending, timeout=timeout, return_when=futures.FIRST_COMPLETED)
                if not done:  # the deadline: give up the games still running
                    call.end()
                    raise NoAnswerError(
                        f"the call's deadline came before every game was played: {len(records)} of {len(tasks)} were"
                    )
                for future in done:
                    record = future.result()
                    if record is None:  # the call ended (the client went away)
                        return
                    records.append(record)
                    yield pb.SimulateGamesResponse(
                        game=pb.SimulatedGame(
                            game_id=f"{record.key[1]}:{record.index}",
                            players=len(record.scores),
                            number=record.index,
                            scores=record.scores,
                            decisions=record.decisions,
                            games_done=len(records),
                            games_total=len(tasks),
                        )
                    )
            records.sort(key=lambda r: r.key)
            report = report_dict(game.name, bot, seed, int(request.games), base, seat_reports_of(players, records))
            yield pb.SimulateGamesResponse(report_json=report_json(report))
        except GeneratorExit:  # the call ended while an answer was being sent
            call.end()
            raise
        except Exception as exc:  # noqa: BLE001 - mapped to a status right here
            context.abort_with_status(status_for(exc, "SimulateGames"))
        finally:
            call.end()
            for future in pending:
                future.cancel()
