// @hortus/client: the hortus advisor from a web page (or node), over Connect or gRPC-Web.
//
// A thin typed wrapper mirroring the Python client (hortus.clients.AdvisorClient): the same
// methods, budgets and typed errors; answers are the generated protobuf-es messages
// (src/gen/hortus/v1/advisor_pb.ts, generated from proto/ at build time).

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";

import { BadRequestSchema, ErrorInfoSchema, QuotaFailureSchema, RetryInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import {
  Advisor,
  PositionSchema,
  type ActionRef,
  type ActionRefSchema,
  type Analysis,
  type AnalyzeResponse,
  type ApplyActionsResponse,
  type EvaluateRequestSchema,
  type EvaluateResponse,
  type GameInfo,
  type GetVersionResponse,
  type LegalActionsResponse,
  type Position,
  type PositionInfo,
  type ReviewGameResponse,
  type SearchLimitsSchema,
  type SimulateGamesResponse,
  type SuggestMoveResponse,
} from "./gen/hortus/v1/advisor_pb.js";

export * from "./gen/hortus/v1/advisor_pb.js";
export * from "./gen/hortus/v1/positions_pb.js";
export { Code, ConnectError } from "@connectrpc/connect";
// protobuf-es's message functions, e.g. toJson(StructuredPositionSchema, view) for a seat's view
// as the JSON a person can keep and paste back (fromJson).
export { create, fromJson, toJson } from "@bufbuild/protobuf";

// --- errors --------------------------------------------------------------------------------
/** A bad request field ("position.game", "actions[2]", "limits.iterations"). */
export interface FieldViolation {
  field: string;
  description: string;
}

/** A server capacity that was exceeded (e.g. "max_concurrent_searches"). */
export interface QuotaViolation {
  subject: string;
  description: string;
}

/** A call to the advisor failed. `code` is the gRPC status code name ("INVALID_ARGUMENT"). */
export class AdvisorError extends Error {
  readonly code: string;
  readonly rawMessage: string;
  readonly cause: ConnectError;

  constructor(error: ConnectError) {
    const code = codeName(error.code);
    super(`${code}: ${error.rawMessage}`);
    this.name = new.target.name;
    this.code = code;
    this.rawMessage = error.rawMessage;
    this.cause = error;
  }
}

/** The request was wrong (bad position, unknown game, illegal action, over a cap);
 * `violations` name the fields, `field` is the first one. */
export class InvalidArgumentError extends AdvisorError {
  readonly violations: FieldViolation[];

  constructor(error: ConnectError) {
    super(error);
    this.violations = error
      .findDetails(BadRequestSchema)
      .flatMap((bad) => bad.fieldViolations.map((v) => ({ field: v.field, description: v.description })));
  }

  get field(): string {
    return this.violations[0]?.field ?? "";
  }
}

/** The server is at capacity; retry after `retryDelayMs` (null when the server gave none). */
export class ResourceExhaustedError extends AdvisorError {
  readonly violations: QuotaViolation[];
  readonly retryDelayMs: number | null;

  constructor(error: ConnectError) {
    super(error);
    this.violations = error
      .findDetails(QuotaFailureSchema)
      .flatMap((q) => q.violations.map((v) => ({ subject: v.subject, description: v.description })));
    const delay = error.findDetails(RetryInfoSchema)[0]?.retryDelay;
    this.retryDelayMs = delay ? Number(delay.seconds) * 1000 + delay.nanos / 1e6 : null;
  }
}

/** A request named state the server keeps, from its google.rpc.ErrorInfo: `reason` (e.g.
 * "CONTINUATION_UNKNOWN") and `field` (e.g. "continue_from"). */
class StateError extends AdvisorError {
  readonly reason: string;
  readonly field: string;

  constructor(error: ConnectError) {
    super(error);
    const info = error.findDetails(ErrorInfoSchema)[0];
    this.reason = info?.reason ?? "";
    this.field = info?.metadata["field"] ?? "";
  }
}

/** What the request names is not kept (anymore), e.g. an analyze `continueFrom` token that
 * expired or was used: analyse afresh without it. */
export class NotFoundError extends StateError {}

/** What the request names is busy, e.g. the analysis a `continueFrom` token continues is still
 * running: retry after it ended. */
export class FailedPreconditionError extends StateError {}

/** The deadline passed before any answer (searches answer partially instead when they can). */
export class DeadlineExceededError extends AdvisorError {}

/** The server could not be reached, or is shutting down: send the call elsewhere. */
export class UnavailableError extends AdvisorError {}

/** The call was cancelled (its AbortSignal fired). */
export class CancelledError extends AdvisorError {}

function codeName(code: Code): string {
  return code === Code.Canceled
    ? "CANCELLED"
    : Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

/** A fetch that never reached the server (refused connection, DNS, a CORS refusal, offline)
 * throws a TypeError; connect may hand it on as it is or wrapped in an UNKNOWN ConnectError. */
function isNetworkFailure(error: unknown): boolean {
  if (error instanceof TypeError) return true;
  return error instanceof ConnectError && error.code === Code.Unknown && error.cause instanceof TypeError;
}

/** The typed error for a failed call (anything else is rethrown as it is). A fetch that
 * failed (no server, connection lost, origin refused by CORS) is an `UnavailableError`. */
export function toAdvisorError(error: unknown): unknown {
  if (isNetworkFailure(error)) {
    const reason = error instanceof ConnectError ? error.cause : error;
    const text = reason instanceof Error ? reason.message : String(reason);
    return new UnavailableError(new ConnectError(`the server could not be reached (${text})`, Code.Unavailable, undefined, undefined, reason));
  }
  if (!(error instanceof ConnectError)) {
    const connect = ConnectError.from(error);
    if (connect.code === Code.Unknown) return error;
    error = connect;
  }
  const e = error as ConnectError;
  switch (e.code) {
    case Code.InvalidArgument:
      return new InvalidArgumentError(e);
    case Code.ResourceExhausted:
      return new ResourceExhaustedError(e);
    case Code.NotFound:
      return new NotFoundError(e);
    case Code.FailedPrecondition:
      return new FailedPreconditionError(e);
    case Code.DeadlineExceeded:
      return new DeadlineExceededError(e);
    case Code.Unavailable:
      return new UnavailableError(e);
    case Code.Canceled:
      return new CancelledError(e);
    default:
      return new AdvisorError(e);
  }
}

// --- options ---------------------------------------------------------------------------------
export interface AdvisorOptions {
  /** The web port of `hortus serve`, e.g. "http://127.0.0.1:8080". */
  baseUrl: string;
  /** "connect" (default) or "grpc-web". */
  protocol?: "connect" | "grpc-web";
  /** Protobuf binary instead of JSON (Connect; gRPC-Web is always binary). */
  binary?: boolean;
  /** Deadline of every call in milliseconds, unless a call gives its own (default: none). */
  timeoutMs?: number;
  /** A transport of your own (tests, interceptors); `baseUrl` and `protocol` are then unused. */
  transport?: Transport;
}

/** Per call: a deadline (the server answers a search partially before it) and a signal. */
export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A search budget: iterations per thread (0 = server default), wall time in ms, a seed
 * (same seed + iterations + one thread = same analysis) and root-parallel threads; `allow` /
 * `avoid`: what-if constraints at the root (ids or notations, as the Python client's `allow` /
 * `avoid` and the CLI's `--only` / `--avoid`): only the allowed moves (none = all) minus the
 * avoided ones are searched and ranked. Each must be legal there, else an InvalidArgumentError
 * naming it (`limits.allow_actions[2]`). */
export interface Budget {
  iterations?: number | bigint;
  timeMs?: number;
  seed?: number | bigint;
  threads?: number;
  allow?: ActionLike[];
  avoid?: ActionLike[];
}

/** An action by id, by notation, or (at a chance node) `{ drawSeed }`: an outcome the server
 * draws with the position's own odds from that seed (same position + seed = same outcome). */
export type ActionLike = number | string | { id: number } | { drawSeed: number | bigint } | ActionRef;

export interface EvaluateItem extends Budget {
  id: string;
  position: Position;
  maxMoves?: number;
}

/** A game record to review (ReviewGame): the setup, then every action in order, chance
 * outcomes included (ids or notations), as `hortus play --record` writes them. */
export interface GameRecord {
  game: string;
  players?: number;
  variant?: string;
  options?: Record<string, string>;
  /** The setup seed (as newGame's); or `position`, the first position's encoded bytes. */
  seed?: number | bigint;
  position?: Uint8Array;
  moves: ActionLike[];
}

/** What `simulateGames` plays: `games` per seat count (required, >= 1). */
export interface SimulationOptions {
  games: number;
  /** Seat counts, each once (none: the game's minimum). */
  players?: number[];
  /** Difficulty level 1-8 of every seat (0 or none: 4). */
  level?: number;
  seed?: number | bigint;
  /** Rule options (see `GameInfo.options`), e.g. `{ first_player: "1" }`. */
  options?: Record<string, string>;
}

/** One seat count's figures in a simulation's report (docs/balance.md). */
export interface SeatCountReport {
  players: number;
  games: number;
  /** Mean win share of each seat (ties shared), and its 95% Wilson interval. */
  seat_share: number[];
  seat_interval95: [number, number][];
  /** Seat 0's share minus the fair share 1/players. */
  first_player_gap: number;
  decisions_p10_p50_p90: [number, number, number];
  rounds_p10_p50_p90: [number, number, number];
  /** "rounds" as the game counts them, or "turns per seat". */
  rounds_counted: string;
  /** The share of games that ended each way ("trigger", "supply", "safety", ...). */
  end_share: Record<string, number>;
  /** The winner's lead over the runner-up in points. */
  margin_p10_p50_p90: [number, number, number];
  mean_points: number[];
  /** Mean share of a decision's outcome the draw decides (null: none measured). */
  draw_share_mean: number | null;
  draw_share_decisions: number;
}

/** The report a simulation ends with: report.json as `hortus balance` writes it (the fields
 * SimulateGames fills; `skill`, `effects` and `card_ranking` stay empty there). */
export interface SimulationReport {
  game: string;
  /** Every seat's bot, e.g. "level:4". */
  bot: string;
  /** The seed as a JS number: exact up to 2^53 (the text, `reportJson`, keeps any seed). */
  seed: number;
  games_per_seat_count: number;
  options: Record<string, string>;
  components: string;
  seat_counts: SeatCountReport[];
  skill: unknown[];
  effects: unknown[];
  card_ranking: unknown[];
  effect_bot: string;
  effect_pairs_max: number;
}

/** A simulation's `reportJson` as its typed report. */
export function parseSimulationReport(reportJson: string): SimulationReport {
  return JSON.parse(reportJson) as SimulationReport;
}

function limits(budget: Budget): MessageInitShape<typeof SearchLimitsSchema> {
  return {
    iterations: BigInt(budget.iterations ?? 0),
    timeMs: budget.timeMs ?? 0,
    seed: BigInt(budget.seed ?? 0),
    threads: budget.threads ?? 0,
    allowActions: (budget.allow ?? []).map(actionRef),
    avoidActions: (budget.avoid ?? []).map(actionRef),
  };
}

function actionRef(action: ActionLike): MessageInitShape<typeof ActionRefSchema> {
  if (typeof action === "number") return { kind: { case: "id", value: action } };
  if (typeof action === "string") return { kind: { case: "notation", value: action } };
  if ("kind" in action) return action;
  if ("drawSeed" in action) return { kind: { case: "drawSeed", value: BigInt(action.drawSeed) } };
  return { kind: { case: "id", value: action.id } };
}

/** `fetch`, whose abort reaches the response's body however long the call lasts. Node's fetch
 * (undici) links a call's signal to its internal request through a weak reference, which a
 * garbage collection can cut (nodejs/node#55428): the abort is then lost, the connection stays
 * open and the server searches on for the whole budget, holding a search slot. Here the
 * signal is followed with an ordinary listener and the abort cancels the body, which closes
 * the connection (and so cancels the call on the server). Browsers do this themselves; the
 * copy costs one more stream per call. */
const fetchAbortable: typeof globalThis.fetch = async (input, init) => {
  const response = await globalThis.fetch(input, init);
  const signal = init?.signal;
  if (!signal || response.body === null) return response;
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel(signal.reason).catch(() => undefined);
  if (signal.aborted) {
    cancel();
    throw signal.reason;
  }
  signal.addEventListener("abort", cancel, { once: true });
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          signal.removeEventListener("abort", cancel);
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        signal.removeEventListener("abort", cancel);
        controller.error(signal.aborted ? signal.reason : error);
      }
    },
    cancel(reason) {
      signal.removeEventListener("abort", cancel);
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
};

// --- the client ------------------------------------------------------------------------------
/** The advisor from a web page: `new AdvisorClient({ baseUrl: "http://127.0.0.1:8080" })`. */
export class AdvisorClient {
  readonly rpc: Client<typeof Advisor>;
  private readonly timeoutMs?: number;

  constructor(options: AdvisorOptions | string) {
    const opts = typeof options === "string" ? { baseUrl: options } : options;
    const transport =
      opts.transport ??
      (opts.protocol === "grpc-web"
        ? createGrpcWebTransport({ baseUrl: opts.baseUrl, useBinaryFormat: true, fetch: fetchAbortable })
        : createConnectTransport({ baseUrl: opts.baseUrl, useBinaryFormat: opts.binary ?? false, fetch: fetchAbortable }));
    this.rpc = createClient(Advisor, transport);
    this.timeoutMs = opts.timeoutMs;
  }

  private options(call: CallOptions | undefined): CallOptions {
    return { timeoutMs: call?.timeoutMs ?? this.timeoutMs, signal: call?.signal };
  }

  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toAdvisorError(error);
    }
  }

  /** The games the server plays. */
  async listGames(call?: CallOptions): Promise<GameInfo[]> {
    return (await this.call(() => this.rpc.listGames({}, this.options(call)))).games;
  }

  /** The server's version, protocol and games. */
  async getVersion(call?: CallOptions): Promise<GetVersionResponse> {
    return this.call(() => this.rpc.getVersion({}, this.options(call)));
  }

  /** A new game (players 0 = the game's minimum); with a seed the setup's chance is drawn.
   *
   * `sealForSeat`: the position comes back sealed for that seat (`position.sealed`, opaque
   * bytes only the server can open) with that seat's view (`info.view`), and every answer
   * about it tells only what that seat may see: a page that holds it cannot show (or leak)
   * another seat's hand. Needs a server with a sealing key (`getVersion().sealing`; see
   * `sealingOffered`); the deal is then keyed, so the seed alone does not tell it. */
  async newGame(
    game: string,
    opts: {
      players?: number; seed?: number | bigint; variant?: string; options?: Record<string, string>; sealForSeat?: number;
    } & CallOptions = {},
  ): Promise<PositionInfo> {
    const request = {
      game,
      players: opts.players ?? 0,
      seed: opts.seed === undefined ? undefined : BigInt(opts.seed),
      variant: opts.variant ?? "",
      options: opts.options ?? {},
      sealForSeat: opts.sealForSeat,
    };
    const response = await this.call(() => this.rpc.newGame(request, this.options(opts)));
    return response.info!;
  }

  /** Legal decisions (or chance outcomes) with notation; `forSeat`: only what that seat may
   * know; `picture`: the SVG that seat sees, `highlight` marked in it. */
  async legalActions(
    position: Position,
    opts: {
      forSeat?: number; picture?: boolean; highlight?: number[];
      /** With `picture`: the moves one seat just made (ApplyActions' applied notations); the
       * picture marks what they changed with the class "last" and data-last="<notation>". */
      last?: { seat: number; notations: string[] };
    } & CallOptions = {},
  ): Promise<LegalActionsResponse> {
    const request = {
      position, forSeat: opts.forSeat, picture: opts.picture ?? false, highlight: opts.highlight ?? [], last: opts.last,
    };
    return this.call(() => this.rpc.legalActions(request, this.options(opts)));
  }

  /** Apply actions (ids, notations or Actions; chance outcomes included) in order.
   * `sealForSeat`: answer the position sealed for that seat (as `newGame`'s). A sealed
   * position is always answered sealed for its own seat; it takes only that seat's own
   * decisions and `{ drawSeed }` draws (another seat's move is played by `suggestMove`, whose
   * answer then carries the next position in `info`), and draws that seat cannot see come
   * back as id -1. */
  async applyActions(
    position: Position, actions: ActionLike[], call?: CallOptions & { sealForSeat?: number },
  ): Promise<ApplyActionsResponse> {
    const request = { position, actions: actions.map(actionRef), sealForSeat: call?.sealForSeat };
    return this.call(() => this.rpc.applyActions(request, this.options(call)));
  }

  /** The decision to play now and the whole turn it starts; `level` 1-8 plays at a difficulty
   * level, `targetElo` at a rating on the game's Elo scale (level 1 = 0; the budget and
   * temperature are interpolated between the levels around it, clamped to levels 1-8). With
   * either, only `seed`, `threads`, `allow` and `avoid` of the budget are used.
   *
   * When the suggested move leads straight to the same seat's next decision, the answer's
   * `continuation` is a token: pass it as `continueFrom` in the `suggestMove` of exactly the
   * position that move led to (on the same client, same `threads`, no `allow`/`avoid`), and
   * that search goes on with the move's subtree, this call's budget on top (the seed does not
   * steer it). An AI opponent continues its own turn this way. A token continues once;
   * `NotFoundError` (`field === "continue_from"`) when the server no longer keeps it: ask
   * afresh. Levels' Elo were measured without it (it makes a level stronger within a turn). */
  async suggestMove(
    position: Position,
    opts: Budget & { level?: number; targetElo?: number; continueFrom?: string } & CallOptions = {},
  ): Promise<SuggestMoveResponse> {
    const request = {
      position, limits: limits(opts), level: opts.level ?? 0, targetElo: opts.targetElo, continueFrom: opts.continueFrom ?? "",
    };
    return this.call(() => this.rpc.suggestMove(request, this.options(opts)));
  }

  /** Every searched move, most visited first (the first `maxMoves`; 0 = all). */
  async rankMoves(position: Position, opts: Budget & { maxMoves?: number } & CallOptions = {}): Promise<Analysis> {
    const request = { position, limits: limits(opts), maxMoves: opts.maxMoves ?? 0 };
    return (await this.call(() => this.rpc.rankMoves(request, this.options(opts)))).analysis!;
  }

  /** The position as `seat`'s structured view. */
  async viewPosition(position: Position, seat: number, call?: CallOptions): Promise<Position> {
    const response = await this.call(() => this.rpc.viewPosition({ position, seat }, this.options(call)));
    return { ...position, encoded: new Uint8Array(), sealed: new Uint8Array(), structured: response.structured };
  }

  /** Whether the server seals positions (it holds a sealing key) and whether it requires
   * them (`--require-sealed`): a frontend then asks `newGame(..., { sealForSeat })`. */
  async sealingOffered(call?: CallOptions): Promise<{ sealing: boolean; required: boolean }> {
    const version = await this.getVersion(call);
    return { sealing: version.sealing, required: version.requireSealed };
  }

  /** A streamed analysis: an update every `intervalMs` of search (default 100), the last one
   * `final`. Leaving the loop early (`break`, `return`, an exception) cancels the call, and the
   * server stops the search at once; so does `signal`.
   *
   * Every update carries `continuation`: pass it as `continueFrom` in a later `analyze` of the
   * same position (same seed and threads) on the same client, and that search goes on from
   * this one's trees (the budget is the additional one; `analysis.iterations` counts them
   * all): a hint button pressed twice gets deeper. A token continues once; `NotFoundError`
   * (`field === "continue_from"`) when the server no longer keeps it: analyse afresh. */
  async *analyze(
    position: Position,
    opts: Budget & { intervalMs?: number; maxMoves?: number; continueFrom?: string } & CallOptions = {},
  ): AsyncGenerator<AnalyzeResponse, void, undefined> {
    const request = {
      position,
      limits: limits(opts),
      intervalMs: opts.intervalMs ?? 100,
      maxMoves: opts.maxMoves ?? 0,
      continueFrom: opts.continueFrom ?? "",
    };
    yield* cancellable((signal) => this.rpc.analyze(request, { timeoutMs: opts.timeoutMs ?? this.timeoutMs, signal }), opts.signal);
  }

  /** Many positions in one call (EvaluateBatch): one answer per position, each exactly once,
   * in completion order (an error is an answer: `result.case === "error"`, with code, message
   * and field). The budget options are the defaults of items that give none. */
  async *evaluate(
    items: EvaluateItem[],
    opts: Budget & { maxMoves?: number } & CallOptions = {},
  ): AsyncGenerator<EvaluateResponse, void, undefined> {
    const positions: MessageInitShape<typeof EvaluateRequestSchema>[] = items.map((item) => ({
      id: item.id,
      position: item.position,
      limits: limits({
        iterations: item.iterations ?? opts.iterations,
        timeMs: item.timeMs ?? opts.timeMs,
        seed: item.seed ?? opts.seed,
        threads: item.threads ?? opts.threads,
        allow: item.allow ?? opts.allow,
        avoid: item.avoid ?? opts.avoid,
      }),
      maxMoves: item.maxMoves ?? opts.maxMoves ?? 0,
    }));
    yield* cancellable((signal) => this.rpc.evaluateBatch({ positions }, { timeoutMs: opts.timeoutMs ?? this.timeoutMs, signal }), opts.signal);
  }

  /** Review a game record (ReviewGame): one `move` answer per decision, in move order
   * (`response.item.case === "move"`: index, seat, played, best, losses, label), then one
   * `summary` (per seat: counts per label, mean losses, accuracy). The budget is per decision;
   * `timeoutMs` bounds the whole review (past it: the moves analysed so far, then
   * DeadlineExceededError). A bad record is InvalidArgumentError naming the field
   * (`moves[17].action`) before any search. Leaving the loop early cancels the call. */
  async *reviewGame(
    record: GameRecord,
    opts: Omit<Budget, "allow" | "avoid"> & CallOptions = {}, // a review compares the moves itself
  ): AsyncGenerator<ReviewGameResponse, void, undefined> {
    const request = {
      game: record.game,
      players: record.players ?? 0,
      variant: record.variant ?? "",
      options: record.options ?? {},
      seed: record.seed === undefined ? undefined : BigInt(record.seed),
      position: record.position ?? new Uint8Array(),
      moves: record.moves.map((action) => ({ action: actionRef(action) })),
      limits: limits(opts),
    };
    yield* cancellable((signal) => this.rpc.reviewGame(request, { timeoutMs: opts.timeoutMs ?? this.timeoutMs, signal }), opts.signal);
  }

  /** A balance report (SimulateGames; see docs/balance.md): `games` seeded self-play games per
   * seat count (`players`, each once; none = the game's minimum), every seat played at
   * difficulty `level` (0 = 4), with the rule `options`. Yields one `game` answer per finished
   * game (`response.item.case === "game"`: `gameId` sent exactly once, final `scores`,
   * `gamesDone` of `gamesTotal`), in completion order, then one `reportJson`, the text of
   * `hortus balance`'s report.json for the same arguments (`parseSimulationReport` reads it).
   * The server's caps: all games together at most `max_batch_size`, the level's iterations at
   * most `max_iterations`; a bad argument is InvalidArgumentError naming the field
   * (`players[1]`) before any game. `timeoutMs` bounds the whole call (past it: the games
   * finished so far, then DeadlineExceededError, no report). Leaving the loop early cancels
   * the call, which stops the games. */
  async *simulateGames(
    game: string,
    opts: SimulationOptions & CallOptions,
  ): AsyncGenerator<SimulateGamesResponse, void, undefined> {
    const request = {
      game,
      players: opts.players ?? [],
      level: opts.level ?? 0,
      games: opts.games,
      seed: BigInt(opts.seed ?? 0),
      options: opts.options ?? {},
    };
    yield* cancellable((signal) => this.rpc.simulateGames(request, { timeoutMs: opts.timeoutMs ?? this.timeoutMs, signal }), opts.signal);
  }
}

/** What a server stream yields, as typed errors; leaving early (break, return, a throw in the
 * loop) or `outer` aborting ends the call. The call is aborted first, which closes the
 * connection (`fetchAbortable`) and so stops the server's search at once; only then is the
 * transport's stream let go, whose return() may wait on the body. */
async function* cancellable<T>(
  open: (signal: AbortSignal) => AsyncIterable<T>,
  outer?: AbortSignal,
): AsyncGenerator<T, void, undefined> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  if (outer?.aborted) controller.abort();
  else outer?.addEventListener("abort", stop, { once: true });
  const iterator = open(controller.signal)[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) {
        finished = true;
        return;
      }
      yield next.value;
    }
  } catch (error) {
    finished = true; // the stream itself failed: nothing to let go
    throw toAdvisorError(error);
  } finally {
    controller.abort();
    outer?.removeEventListener("abort", stop);
    if (!finished) void iterator.return?.()?.catch(() => undefined);
  }
}

/** `createAdvisor("http://127.0.0.1:8080")`: the same as `new AdvisorClient(...)`. */
export function createAdvisor(options: AdvisorOptions | string): AdvisorClient {
  return new AdvisorClient(options);
}

/** A position message from a game name and its encoded bytes (e.g. kept in a page's state). */
export function position(game: string, encoded: Uint8Array): Position {
  return create(PositionSchema, { game, encoded });
}

/** A sealed position (`Position.sealed`, as the server handed it out) from its bytes. */
export function sealedPosition(sealed: Uint8Array, game = ""): Position {
  return create(PositionSchema, { game, sealed });
}

/** Whether a position is sealed (opaque to the client; see `newGame`'s `sealForSeat`). */
export function isSealed(position: Position): boolean {
  return position.sealed.length > 0;
}

/** A replacer for `JSON.stringify` of any answer: its 64-bit counts (visits, iterations,
 * seeds) are bigints, which `JSON.stringify` refuses; this writes each as a number where it
 * fits exactly (`Number.isSafeInteger`), else as a decimal string.
 * `JSON.stringify(analysis, jsonReplacer)`. */
export function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value !== "bigint") return value;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value.toString();
}

/** `JSON.stringify` with `jsonReplacer`: any answer (or part of one) as JSON text (protobuf-es's
 * `toJson(Schema, message)` gives the proto3 JSON form instead, 64-bit counts as strings). */
export function stringify(value: unknown, space?: number): string {
  return JSON.stringify(value, jsonReplacer, space);
}
