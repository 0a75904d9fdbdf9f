// The TypeScript client against a real `hortus serve` started here (its web port on a free
// port), over Connect JSON, Connect binary and gRPC-Web: every RPC, errors with their field,
// deadlines, a cancelled analysis, a batch answered exactly once.
// Run: npm test (HORTUS_PYTHON = the Python with hortus[web] installed; default python3).

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";

import {
  AdvisorClient,
  CancelledError,
  InvalidArgumentError,
  NotFoundError,
  ResourceExhaustedError,
  parseSimulationReport,
  position as makePosition,
} from "../dist/index.js";

const python = process.env.HORTUS_PYTHON ?? "python3";
const SEARCHES = 2;
let server;
let url;

before(async () => {
  server = spawn(
    python,
    ["-m", "hortus.cli", "serve", "--address", "127.0.0.1:0", "--workers", "1",
      "--web-address", "127.0.0.1:0", "--max-concurrent-searches", String(SEARCHES), "--max-threads", "1",
      "--max-batch-size", "8", "--default-iterations", "200", "--deadline-margin-ms", "150", "--grace-seconds", "1", "--log-level", "warning"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("hortus serve did not start in 120 s")), 120_000);
    createInterface({ input: server.stdout }).on("line", (line) => {
      const match = /hortus web .* on (http:\/\/\S+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    server.on("exit", (code) => reject(new Error(`hortus serve exited with ${code}`)));
  });
});

after(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.on("exit", resolve));
    server.kill("SIGTERM");
    const force = setTimeout(() => server.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(force);
  }
});

let simulationReport; // the first protocol's: every protocol sends the same bytes
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

for (const [name, options] of [
  ["connect json", {}],
  ["connect binary", { binary: true }],
  ["grpc-web", { protocol: "grpc-web" }],
]) {
  describe(name, () => {
    const client = () => new AdvisorClient({ baseUrl: url, ...options });

    test("games, version, a game played by ids and notation", async () => {
      const advisor = client();
      const games = await advisor.listGames();
      assert.ok(games.some((g) => g.name === "botanik"));
      const version = await advisor.getVersion();
      assert.equal(version.protocol, "hortus.v1");
      const info = await advisor.newGame("botanik", { seed: 1 });
      assert.equal(info.terminal, false);
      const legal = await advisor.legalActions(info.position);
      assert.ok(legal.actions.length > 0);
      const first = legal.actions[0];
      const applied = await advisor.applyActions(info.position, [first.notation]);
      assert.equal(applied.applied[0].id, first.id);
      const byId = await advisor.applyActions(info.position, [first.id]);
      assert.deepEqual(byId.info.position.encoded, applied.info.position.encoded);
      const view = await advisor.viewPosition(info.position, 0);
      assert.equal(view.structured?.view.case, "botanik");
    });

    test("the same seed gives the same move; ranked hints", async () => {
      const advisor = client();
      const info = await advisor.newGame("botanik", { seed: 2 });
      const a = await advisor.suggestMove(info.position, { iterations: 200, seed: 5, threads: 1 });
      const b = await advisor.suggestMove(makePosition("botanik", info.position.encoded), { iterations: 200, seed: 5, threads: 1 });
      assert.equal(a.action.id, b.action.id);
      assert.ok(a.turn.length >= 1);
      const level = await advisor.suggestMove(info.position, { level: 1, seed: 3 });
      assert.ok(level.action);
      const hints = await advisor.rankMoves(info.position, { iterations: 200, seed: 5, maxMoves: 3 });
      assert.ok(hints.moves.length >= 1 && hints.moves.length <= 3);
      assert.ok(hints.moves[0].winProbability >= 0 && hints.moves[0].winProbability <= 1);
      assert.equal(hints.iterations, 200n);
    });

    test("a bad request is an InvalidArgumentError naming the field", async () => {
      const advisor = client();
      await assert.rejects(advisor.newGame("nope"), (e) => e instanceof InvalidArgumentError && e.field === "game");
      const info = await advisor.newGame("botanik", { seed: 1 });
      await assert.rejects(
        advisor.rankMoves(info.position, { iterations: 10n ** 12n }),
        (e) => e instanceof InvalidArgumentError && e.code === "INVALID_ARGUMENT" && e.field === "limits.iterations"
          && e.violations[0].description.includes("max_iterations"),
      );
      await assert.rejects(
        advisor.applyActions(info.position, ["no such move"]),
        (e) => e instanceof InvalidArgumentError && e.field === "actions[0]",
      );
    });

    test("a deadline gives a partial answer in time", async () => {
      const advisor = client();
      const info = await advisor.newGame("botanik", { seed: 1 });
      // 3 s: a 1.5 s deadline was missed once at load average 13 (the answer's way back); the
      // search's 15 s budget must still be cut short by it.
      const hints = await advisor.rankMoves(info.position, { timeMs: 15_000, timeoutMs: 3000 });
      assert.equal(hints.partial, true);
      assert.ok(hints.elapsedMs < 3000);
    });

    test("analyze: partial updates, then exactly one final", async () => {
      const advisor = client();
      const info = await advisor.newGame("botanik", { seed: 1 });
      const updates = [];
      for await (const update of advisor.analyze(info.position, { timeMs: 400, intervalMs: 50, maxMoves: 2 })) {
        updates.push(update);
      }
      assert.ok(updates.length >= 2);
      assert.equal(updates.filter((u) => u.final).length, 1);
      assert.equal(updates.at(-1).final, true);
    });

    test("analyze: continueFrom goes on with the same trees; a used token is NotFoundError", async () => {
      const advisor = client();
      const info = await advisor.newGame("botanik", { seed: 2 });
      const run = async (opts) => {
        const updates = [];
        for await (const update of advisor.analyze(info.position, { seed: 5, intervalMs: 0, ...opts })) updates.push(update);
        return updates.at(-1);
      };
      const first = await run({ iterations: 150 });
      assert.equal(Number(first.analysis.iterations), 150);
      assert.ok(first.continuation.length > 0);
      const second = await run({ iterations: 100, continueFrom: first.continuation });
      assert.equal(Number(second.analysis.iterations), 250);
      assert.equal(second.analysis.moves.reduce((n, m) => n + Number(m.visits), 0), 250);
      assert.notEqual(second.continuation, first.continuation);
      await assert.rejects(run({ iterations: 100, continueFrom: first.continuation }), (error) => {
        assert.ok(error instanceof NotFoundError);
        assert.equal(error.code, "NOT_FOUND");
        assert.equal(error.field, "continue_from");
        assert.equal(error.reason, "CONTINUATION_UNKNOWN");
        return true;
      });
      const other = await advisor.newGame("botanik", { seed: 3 });
      await assert.rejects(
        (async () => {
          for await (const _ of advisor.analyze(other.position, { iterations: 50, seed: 5, intervalMs: 0, continueFrom: second.continuation })) { /* none */ }
        })(),
        (error) => error instanceof InvalidArgumentError && error.field === "continue_from",
      );
    });

    test("suggestMove: continueFrom continues the AI's turn with the kept subtree", async () => {
      const advisor = client();
      // a Botanical Lab position whose suggested move leads to the same seat's next decision
      let position = (await advisor.newGame("botanical_lab", { seed: 5 })).position;
      let first;
      for (let step = 0; step < 80 && !first; step++) {
        const legal = await advisor.legalActions(position);
        if (legal.currentPlayer === -1) {
          position = (await advisor.applyActions(position, [{ drawSeed: BigInt(step) }])).info.position;
          continue;
        }
        const answer = await advisor.suggestMove(position, { iterations: 300, seed: 1 });
        if (answer.continuation) first = { position, answer };
        else position = (await advisor.applyActions(position, [answer.action.id])).info.position;
      }
      assert.ok(first, "no suggestion continued the seat's turn");
      const after = (await advisor.applyActions(first.position, [first.answer.action.id])).info;
      assert.equal(after.currentPlayer, first.answer.analysis.seat);
      const visits = (answer) => answer.analysis.moves.reduce((n, m) => n + Number(m.visits), 0);
      const continued = await advisor.suggestMove(after.position, { iterations: 200, seed: 2, continueFrom: first.answer.continuation });
      const fresh = await advisor.suggestMove(after.position, { iterations: 200, seed: 2 });
      assert.equal(Number(continued.analysis.iterations), 200);
      assert.ok(visits(continued) > visits(fresh), `${visits(continued)} > ${visits(fresh)}`);
      await assert.rejects(advisor.suggestMove(after.position, { iterations: 200, continueFrom: first.answer.continuation }), (error) => {
        assert.ok(error instanceof NotFoundError);
        assert.equal(error.field, "continue_from");
        assert.equal(error.reason, "CONTINUATION_UNKNOWN");
        return true;
      });
      const again = await advisor.suggestMove(first.position, { iterations: 300, seed: 1 });
      assert.equal(again.action.id, first.answer.action.id);
      await assert.rejects(
        advisor.suggestMove(first.position, { iterations: 200, continueFrom: again.continuation }),
        (error) => error instanceof InvalidArgumentError && error.field === "continue_from",
      );
    });

    test("evaluate: every position answered exactly once, errors as answers", async () => {
      const advisor = client();
      const items = [];
      for (let i = 0; i < 5; i++) {
        const info = await advisor.newGame("botanik", { seed: 10 + i });
        items.push({ id: `p${i}`, position: info.position, iterations: 40 + 30 * i });
      }
      items.push({ id: "bad", position: makePosition("nope", new Uint8Array()) });
      const answers = [];
      for await (const answer of advisor.evaluate(items, { seed: 1, maxMoves: 1 })) answers.push(answer);
      assert.deepEqual(answers.map((a) => a.id).sort(), ["bad", "p0", "p1", "p2", "p3", "p4"]);
      const bad = answers.find((a) => a.id === "bad");
      assert.equal(bad.result.case, "error");
      assert.equal(bad.result.value.field, "position.game");
      assert.ok(answers.filter((a) => a.id !== "bad").every((a) => a.result.case === "analysis"));
      const tooMany = Array.from({ length: 9 }, (_, i) => ({ ...items[0], id: String(i) }));
      await assert.rejects(
        (async () => { for await (const _ of advisor.evaluate(tooMany)) { /* none */ } })(),
        (e) => e instanceof InvalidArgumentError && e.field === "positions",
      );
    });

    test("reviewGame: one answer per decision in move order, then the summary; a bad move named", async () => {
      const advisor = client();
      // a short game record: the first actions of a seeded game (the last legal move each time)
      let info = await advisor.newGame("botanik", { seed: 4 });
      const moves = [];
      const decisions = [];
      while (moves.length < 24 && !info.terminal) {
        const legal = await advisor.legalActions(info.position);
        const action = legal.actions.length ? legal.actions.at(-1).id : legal.chanceOutcomes[0].action.id;
        if (legal.actions.length) decisions.push(moves.length);
        moves.push(action);
        info = (await advisor.applyActions(info.position, [action])).info;
      }
      const record = { game: "botanik", players: 2, seed: 4, moves };
      const answers = [];
      for await (const answer of advisor.reviewGame(record, { iterations: 80, seed: 2 })) answers.push(answer);
      const reviewed = answers.filter((a) => a.item.case === "move").map((a) => a.item.value);
      assert.deepEqual(reviewed.map((m) => m.index), decisions);
      assert.ok(reviewed.every((m) => ["best", "good", "inaccuracy", "mistake", "blunder"].includes(m.label)));
      assert.ok(reviewed.every((m) => m.winProbabilityLoss >= 0 && (m.played.id !== m.best.id || m.label === "best")));
      assert.equal(answers.at(-1).item.case, "summary");
      assert.equal(answers.at(-1).item.value.seats.length, 2);
      const bad = { ...record, moves: moves.map((m, i) => (i === decisions[3] ? 9999 : m)) };
      await assert.rejects(
        (async () => { for await (const _ of advisor.reviewGame(bad)) { /* none */ } })(),
        (e) => e instanceof InvalidArgumentError && e.field === `moves[${decisions[3]}].action`,
      );
    });

    test("simulateGames: each game once as it finishes, then the report; a bad field named", async () => {
      const advisor = client();
      const answers = [];
      for await (const answer of advisor.simulateGames("botanik", { games: 4, level: 1, seed: 5 })) answers.push(answer);
      const games = answers.slice(0, -1).map((a) => {
        assert.equal(a.item.case, "game");
        return a.item.value;
      });
      assert.deepEqual(games.map((g) => g.gameId).sort(), ["2:0", "2:1", "2:2", "2:3"]);
      assert.deepEqual(games.map((g) => g.gamesDone), [1, 2, 3, 4]);
      assert.ok(games.every((g) => g.gamesTotal === 4 && g.players === 2 && g.scores.length === 2));
      const last = answers.at(-1);
      assert.equal(last.item.case, "reportJson");
      const report = parseSimulationReport(last.item.value);
      assert.equal(report.game, "botanik");
      assert.equal(report.bot, "level:1");
      assert.equal(report.games_per_seat_count, 4);
      const [seats] = report.seat_counts;
      assert.equal(seats.players, 2);
      assert.equal(seats.games, 4);
      assert.ok(Math.abs(seats.seat_share[0] + seats.seat_share[1] - 1) < 1e-9);
      const meanPoints = (seat) => games.reduce((sum, g) => sum + g.scores[seat], 0) / 4;
      assert.ok(Math.abs(seats.mean_points[0] - meanPoints(0)) < 1e-9 && Math.abs(seats.mean_points[1] - meanPoints(1)) < 1e-9);
      simulationReport ??= last.item.value;
      assert.equal(last.item.value, simulationReport);
      await assert.rejects(
        (async () => { for await (const _ of advisor.simulateGames("botanists", { games: 1, players: [2, 2] })) { /* none */ } })(),
        (e) => e instanceof InvalidArgumentError && e.field === "players[1]",
      );
      await assert.rejects(
        (async () => { for await (const _ of advisor.simulateGames("botanik", { games: 9 })) { /* none */ } })(),
        (e) => e instanceof InvalidArgumentError && e.field === "games" && e.violations[0].description.includes("max_batch_size"),
      );
    });
  });
}

describe("capacity and cancellation", () => {
  // Whether a search slot is free: a tiny RankMoves is admitted (RESOURCE_EXHAUSTED otherwise).
  async function slotFree(advisor, position) {
    try {
      await advisor.rankMoves(position, { iterations: 1 });
      return true;
    } catch (e) {
      if (e instanceof ResourceExhaustedError) return false;
      throw e;
    }
  }

  test("leaving an analysis frees its search slot at once; RESOURCE_EXHAUSTED carries its details", async (t) => {
    const advisor = new AdvisorClient(url);
    const info = await advisor.newGame("botanik", { seed: 1 });
    const holder = new AbortController();
    // Fill the other slots with long searches, and wait until each has sent a first partial
    // analysis (it holds its slot then): otherwise a holder still on its way could be refused
    // after the probe below took its slot, on a slow machine.
    const holders = [];
    const admitted = [];
    for (let i = 0; i < SEARCHES - 1; i++) {
      let ready;
      admitted.push(new Promise((resolve) => { ready = resolve; }));
      holders.push((async () => {
        try {
          for await (const _ of advisor.analyze(info.position, { timeMs: 15_000, intervalMs: 50, signal: holder.signal })) ready();
        } catch (e) {
          ready();
          assert.ok(e instanceof CancelledError, String(e));
        }
      })());
    }
    try {
      await Promise.all(admitted);
      const stream = advisor.analyze(info.position, { timeMs: 15_000, intervalMs: 50 });
      const first = await stream.next();
      assert.equal(first.value.final, false);
      // Every slot is busy now: the next search is refused with QuotaFailure and RetryInfo.
      await assert.rejects(
        advisor.rankMoves(info.position, { iterations: 10 }),
        (e) => e instanceof ResourceExhaustedError && e.violations[0].subject === "max_concurrent_searches"
          && e.retryDelayMs > 0,
      );
      // node's fetch lost an abort after a garbage collection (nodejs/node#55428): the client
      // must not depend on when one runs (npm test runs node with --expose-gc)
      globalThis.gc?.();
      const left = performance.now();
      await stream.return(undefined); // leave the loop: the call is cancelled
      while (!(await slotFree(advisor, info.position))) {
        assert.ok(performance.now() - left < 10_000, "the search slot was never freed");
        await sleep(2);
      }
      const ms = performance.now() - left;
      t.diagnostic(`analyze cancel -> slot free again: ${ms.toFixed(1)} ms (includes the probe's round trip)`);
      assert.ok(ms < 5_000, `${ms} ms: freed by the cancel, not by the 15 s budget`);
    } finally {
      holder.abort();
      await Promise.all(holders);
    }
  });
});

describe("what-if constraints, target Elo and server draws (as the Python client)", () => {
  test("allow / avoid: only the allowed moves minus the avoided ones are searched and ranked", async () => {
    const advisor = new AdvisorClient(url);
    const info = await advisor.newGame("botanik", { seed: 6 });
    const legal = (await advisor.legalActions(info.position)).actions;
    assert.ok(legal.length >= 3);
    const [a, b, c] = legal;
    // allow by id and by notation: the ranking holds exactly those moves
    const ranked = await advisor.rankMoves(info.position, { iterations: 200, seed: 1, allow: [a.id, b.notation] });
    assert.deepEqual(new Set(ranked.moves.map((m) => m.action.id)), new Set([a.id, b.id]));
    // allow three, avoid one: never the avoided move
    const narrowed = await advisor.rankMoves(info.position, { iterations: 200, seed: 1, allow: [a.id, b.id, c.id], avoid: [b.id] });
    assert.deepEqual(new Set(narrowed.moves.map((m) => m.action.id)), new Set([a.id, c.id]));
    // the AI's move under constraints: the only allowed one
    const only = await advisor.suggestMove(info.position, { iterations: 100, seed: 1, allow: [c.notation] });
    assert.equal(only.action.id, c.id);
    const best = await advisor.suggestMove(info.position, { iterations: 200, seed: 2, threads: 1 });
    const other = await advisor.suggestMove(info.position, { iterations: 200, seed: 2, threads: 1, avoid: [best.action.id] });
    assert.notEqual(other.action.id, best.action.id);
    // at a level, too (only the seed of the budget is used there)
    const levelled = await advisor.suggestMove(info.position, { level: 2, seed: 3, allow: [a.id] });
    assert.equal(levelled.action.id, a.id);
    // a move that is not legal there names its place in the request
    await assert.rejects(
      advisor.rankMoves(info.position, { iterations: 50, allow: [a.id, "no such move"] }),
      (e) => e instanceof InvalidArgumentError && e.field === "limits.allow_actions[1]",
    );
  });

  test("targetElo: level 1 is Elo 0 on every game's scale; a bad rating names target_elo", async () => {
    const advisor = new AdvisorClient(url);
    const info = await advisor.newGame("botanik", { seed: 3 });
    const byElo = await advisor.suggestMove(info.position, { targetElo: 0, seed: 9 });
    const byLevel = await advisor.suggestMove(info.position, { level: 1, seed: 9 });
    assert.equal(byElo.action.id, byLevel.action.id);
    assert.equal(byElo.analysis.iterations, byLevel.analysis.iterations);
    const strong = await advisor.suggestMove(info.position, { targetElo: 10_000, seed: 9, timeoutMs: 60_000 });
    assert.ok(strong.analysis.iterations > byElo.analysis.iterations || strong.analysis.partial);
    await assert.rejects(
      advisor.suggestMove(info.position, { targetElo: Number.NaN }),
      (e) => e instanceof InvalidArgumentError && e.field === "target_elo",
    );
  });

  test("applyActions { drawSeed }: the server deals, the same seed deals the same", async () => {
    const advisor = new AdvisorClient(url);
    let info = await advisor.newGame("botanists", { players: 2, seed: 4 });
    // play until a chance node (a draw) comes up
    for (let i = 0; i < 200 && info.currentPlayer !== -1 && !info.terminal; i++) {
      const move = await advisor.suggestMove(info.position, { iterations: 10, seed: i });
      info = (await advisor.applyActions(info.position, [move.action.id])).info;
    }
    assert.equal(info.currentPlayer, -1, "no chance node reached");
    const one = await advisor.applyActions(info.position, [{ drawSeed: 77 }]);
    const two = await advisor.applyActions(info.position, [{ drawSeed: 77n }]);
    assert.deepEqual(one.info.position.encoded, two.info.position.encoded);
    assert.equal(one.applied.length, 1);
  });
});
