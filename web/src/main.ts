// The hortus page: play any of the games against the AI, with hints and a live analysis.
// The position lives in the page (the service is stateless); every picture is the server's
// SVG of the viewing seat (LegalActions picture), whose move elements carry data-action.
// It talks to the server through the TypeScript client (clients/typescript: Connect JSON over
// fetch, typed errors), bundled in by web/build.mjs.
// When the server seals positions (hortus serve --seal-key), the page holds the position only
// sealed for the human's seat: the Position box, the link and every answer it receives then
// tell nothing that seat cannot see (the AI's hand stays on the server's side of the key).

import {
  AdvisorClient, AdvisorError, CancelledError, FailedPreconditionError, InvalidArgumentError, NotFoundError,
  UnavailableError,
  PositionSchema, StructuredPositionSchema,
  create, fromJson, isSealed, sealedPosition, toJson,
  type ActionLike, type Analysis, type GameInfo, type LegalActionsResponse, type MoveAnalysis, type Position,
  type PositionInfo,
} from "../../clients/typescript/src/index.js";

/** The web port that served this page (same origin: no CORS, no other host contacted). */
// ?server=URL: a page served from elsewhere calling a server's web port (needs that server's
// --cors-origin for this page's origin).
const SERVER = new URLSearchParams(location.search).get("server") || location.origin;
const advisor = new AdvisorClient({ baseUrl: SERVER });

/** A mistake found in the page before any call (a pasted text that is no position). */
class PageError extends Error {
  constructor(message: string, readonly field: string) {
    super(message);
  }
}

function hexToBytes(hex: string): Uint8Array {
  const clean = hex.replace(/\s+/g, "");
  if (!/^([0-9a-fA-F]{2})*$/.test(clean)) throw new PageError("not a hex string", "position");
  return Uint8Array.from(clean.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

function bytesToHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

interface Setup {
  game: string;
  players: number;
  level: number;
  seed: number;
  ai: number[]; // seats the AI plays
  manualChance: boolean;
}

const state = {
  setup: { game: "botanik", players: 2, level: 3, seed: 1, ai: [1], manualChance: false } as Setup,
  games: [] as GameInfo[],
  position: null as Position | null,
  // The server seals positions (GetVersion): games are then held sealed for one human seat.
  sealing: false,
  // The seat the held position is sealed for (its view is all the page gets), else null.
  audience: null as number | null,
  info: null as PositionInfo | null,
  legal: null as LegalActionsResponse | null,
  ply: 0,
  // What the viewing seat saw happen, in notation (the AI's moves, its own, and the chance
  // draws it may see; a draw it may not see is named as hidden), and the last turn: the moves
  // one seat made in a row (War's AI makes about eight), which the picture marks.
  log: [] as string[],
  last: null as { seat: number; notations: string[] } | null,
  generation: 0, // bumped by every new game: stale AI steps stop
  busy: false,
  analysis: null as AbortController | null,
  hint: [] as number[],
  // The last search of this position (a hint or an analysis): its continuation token, so the
  // next one goes on from its trees and gets deeper instead of repeating (Analyze continue_from).
  continuation: null as { position: Position; token: string } | null,
  // The AI's last suggestion, when its move led straight to the same seat's next decision:
  // the token (SuggestMove continue_from) for the position at `ply` of game `generation`, so
  // the AI's next decision of that turn goes on with the same search instead of a fresh one.
  aiTurn: null as { generation: number; ply: number; token: string } | null,
};

// --- small helpers ----------------------------------------------------------------------
/** What a person reads: the server's message, and the request field it is about (the
 * BadRequest violation), never a stack trace. */
function readable(e: unknown): string {
  if (e instanceof InvalidArgumentError) {
    const violation = e.violations[0];
    const where = violation?.field ? ` (field: ${violation.field})` : "";
    return `${violation?.description || e.rawMessage}${where}`;
  }
  if (e instanceof UnavailableError) {
    // A fetch that failed tells the page nothing more (the browser hides a CORS refusal
    // from scripts): name the likely causes and what fixes each.
    // (the client's message already says "could not be reached (<cause>)": the cause alone)
    const cause = e.rawMessage.replace(/^the server could not be reached \((.*)\)$/s, "$1");
    return `The server at ${SERVER} could not be reached (${cause}): the connection was lost or ` +
      `the server stopped (try again when it is back), or it refuses this page's origin ${location.origin} ` +
      `(start it with --cors-origin ${location.origin}; the server logs the origins it refuses).`;
  }
  if (e instanceof AdvisorError) return e.rawMessage || e.code;
  if (e instanceof PageError) return `${e.message} (field: ${e.field})`;
  if (e instanceof Error) return e.message;
  return String(e);
}

function showError(e: unknown): void {
  const box = $("error");
  box.textContent = readable(e);
  box.hidden = false;
}

function clearError(): void {
  $("error").hidden = true;
  $("error").textContent = "";
}

function setStatus(text: string): void {
  $("status").textContent = text;
}

function humanSeats(): number[] {
  const out: number[] = [];
  for (let p = 0; p < state.setup.players; p++) if (!state.setup.ai.includes(p)) out.push(p);
  return out;
}

/** The seat whose picture is shown: the seat a sealed position is sealed for; else the human
 * to move, else the first human, else seat 0. */
function viewSeat(): number {
  if (state.audience !== null) return state.audience;
  const mover = state.info?.currentPlayer ?? 0;
  const humans = humanSeats();
  if (humans.includes(mover)) return mover;
  return humans.length ? humans[0] : 0;
}

function fmtPct(x: number | undefined): string {
  return `${Math.round((x ?? 0) * 100)}%`;
}

// --- the set-up form and the shareable link -----------------------------------------------
function readUrl(): { position: string | null; sealed: string | null } {
  const q = new URLSearchParams(location.search);
  const s = state.setup;
  if (q.get("game")) s.game = q.get("game")!;
  if (q.get("players")) s.players = parseInt(q.get("players")!, 10) || s.players;
  if (q.get("level")) s.level = parseInt(q.get("level")!, 10) || s.level;
  if (q.get("seed")) s.seed = parseInt(q.get("seed")!, 10) || 0;
  if (q.get("ai") !== null) s.ai = q.get("ai")!.split(",").filter((x) => x !== "").map((x) => parseInt(x, 10));
  else s.ai = Array.from({ length: Math.max(s.players - 1, 0) }, (_, i) => i + 1);
  if (q.get("players") === "1") s.ai = [];
  s.manualChance = q.get("chance") === "manual";
  return { position: q.get("position"), sealed: q.get("sealed") };
}

function link(withPosition: boolean): string {
  const s = state.setup;
  const q = new URLSearchParams({
    game: s.game, players: String(s.players), level: String(s.level), seed: String(s.seed), ai: s.ai.join(","),
  });
  if (s.manualChance) q.set("chance", "manual");
  if (withPosition && state.position && isSealed(state.position)) q.set("sealed", bytesToHex(state.position.sealed));
  else if (withPosition && state.position?.encoded.length) q.set("position", bytesToHex(state.position.encoded));
  return `${location.origin}${location.pathname}?${q.toString()}`;
}

function fillForm(): void {
  const s = state.setup;
  const gameSelect = $("game") as HTMLSelectElement;
  gameSelect.innerHTML = "";
  for (const g of state.games) {
    const o = document.createElement("option");
    o.value = g.name;
    o.textContent = TITLES[g.name] ?? g.name.replace(/_/g, " ");
    gameSelect.append(o);
  }
  gameSelect.value = s.game;
  fillPlayers();
  ($("level") as HTMLSelectElement).value = String(s.level);
  ($("seed") as HTMLInputElement).value = String(s.seed);
  ($("manual-chance") as HTMLInputElement).checked = s.manualChance;
}

function fillPlayers(): void {
  const s = state.setup;
  const info = state.games.find((g) => g.name === s.game);
  const select = $("players") as HTMLSelectElement;
  select.innerHTML = "";
  const lo = info?.minPlayers ?? 2;
  const hi = info?.maxPlayers ?? 4;
  for (let n = lo; n <= hi; n++) {
    const o = document.createElement("option");
    o.value = String(n);
    o.textContent = n === 1 ? "1 (solo)" : String(n);
    select.append(o);
  }
  s.players = Math.min(Math.max(s.players, lo), hi);
  select.value = String(s.players);
  const box = $("ai-seats");
  box.innerHTML = "";
  for (let p = 0; p < s.players; p++) {
    const label = document.createElement("label");
    const input = document.createElement("input");
    input.type = "checkbox";
    input.dataset.seat = String(p);
    input.checked = s.ai.includes(p);
    label.append(input, ` seat ${p}`);
    box.append(label);
  }
}

function readForm(): void {
  const s = state.setup;
  s.game = ($("game") as HTMLSelectElement).value;
  s.players = parseInt(($("players") as HTMLSelectElement).value, 10);
  s.level = parseInt(($("level") as HTMLSelectElement).value, 10);
  s.seed = parseInt(($("seed") as HTMLInputElement).value, 10) || 0;
  s.manualChance = ($("manual-chance") as HTMLInputElement).checked;
  s.ai = Array.from(document.querySelectorAll<HTMLInputElement>("#ai-seats input"))
    .filter((i) => i.checked && parseInt(i.dataset.seat!, 10) < s.players)
    .map((i) => parseInt(i.dataset.seat!, 10));
}

// --- the game loop ---------------------------------------------------------------------
async function newGame(): Promise<void> {
  state.generation++;
  state.ply = 0;
  state.log = [];
  state.last = null;
  const s = state.setup;
  history.replaceState(null, "", link(false));
  await advance(() => advisor.newGame(s.game, { players: s.players, seed: s.seed, sealForSeat: sealFor() }));
}

/** The seat to seal a game for: the one human seat (seat 0 when the AI plays every seat),
 * when the server seals; undefined (a plain position) when several humans share the screen,
 * since a sealed position takes the decisions of its own seat only. */
function sealFor(): number | undefined {
  const humans = humanSeats();
  return state.sealing && humans.length <= 1 ? humans[0] ?? 0 : undefined;
}

async function openPosition(position: Position): Promise<void> {
  state.generation++;
  state.log = [];
  state.last = null;
  const sealForSeat = isSealed(position) ? undefined : sealFor();
  await advance(async () => (await advisor.applyActions(position, [], { sealForSeat })).info!);
}

/** What the Position box shows: a sealed position as "sealed:" and its hex (opaque bytes),
 * else the encoded position's hex. */
function positionText(position: Position): string {
  return isSealed(position) ? `sealed:${bytesToHex(position.sealed)}` : bytesToHex(position.encoded);
}

async function show(info: PositionInfo): Promise<void> {
  state.info = info;
  state.position = info.position!;
  // the seat a sealed position is sealed for: the seat of the view that comes with it
  const seen = info.view?.view.value as { seat?: number } | undefined;
  state.audience = isSealed(state.position) ? seen?.seat ?? 0 : null;
  state.hint = [];
  $("hints").innerHTML = "";
  ($("position-hex") as HTMLTextAreaElement).value = positionText(state.position);
  ($("share") as HTMLInputElement).value = link(true);
  state.legal = await advisor.legalActions(state.position, { forSeat: viewSeat(), picture: true, last: state.last ?? undefined });
  render();
  renderLog();
}

function setBusy(busy: boolean): void {
  state.busy = busy;
  document.body.dataset.busy = busy ? "1" : "0";
}

/** Shows a new position (nothing else may change it meanwhile), then lets chance or the AI
 * move if it is theirs. */
async function advance(load: () => Promise<PositionInfo>): Promise<void> {
  if (state.busy) return;
  stopAnalysis();
  clearError();
  closeChooser();
  setBusy(true);
  let ok = false;
  try {
    await show(await load());
    ok = true;
  } catch (e) {
    showError(e);
  } finally {
    setBusy(false);
  }
  if (ok) void step(state.generation);
}

/** The games' names as their rulebooks write them (the API names are identifiers). */
const TITLES: Record<string, string> = {
  botanik: "Botanik",
  botanists: "Botanists",
  botanical_lab: "Botanical Lab",
  war_of_the_posies: "Botany: War of the Posies",
};

/** Who won, from the engine's returns (each seat's share of the win), never from the scores
 * alone: on equal points a game's tie-break (e.g. Botanical Lab's machine tiles) decides, and
 * only seats that share the top return share the win. */
function winnerText(scores: number[], returns: number[]): string {
  const best = Math.max(...returns);
  const winners = returns.map((v, p) => (v === best && v > 0 ? p : -1)).filter((p) => p >= 0);
  if (!winners.length) return "No winner.";
  const names = winners.map((p) => `seat ${p}`).join(" and ");
  if (winners.length > 1) return `Shared win: ${names}.`;
  const tied = scores.filter((v) => v === scores[winners[0]]).length > 1;
  return `Winner: ${names}${tied ? " (on the tie-break)" : ""}.`;
}

/** The picture scales to its column, but never so far down that its smallest text falls
 * under MIN_TEXT_PX on screen: below that width it keeps its size and scrolls inside its own
 * box (#picture), so a phone page never scrolls sideways and its labels stay legible. */
const MIN_TEXT_PX = 11;
function readableText(svg: SVGSVGElement): void {
  const width = svg.viewBox.baseVal?.width;
  let smallest = Infinity;
  for (const text of svg.querySelectorAll("text")) {
    const size = parseFloat(getComputedStyle(text).fontSize);
    if (size > 0) smallest = Math.min(smallest, size);
  }
  if (width && Number.isFinite(smallest)) svg.style.minWidth = `${Math.ceil((width * MIN_TEXT_PX) / smallest)}px`;
}

function render(): void {
  const info = state.info!;
  const legal = state.legal!;
  const mover = info.currentPlayer ?? 0;
  const seat = viewSeat();
  $("picture").innerHTML = legal.picture || "";
  const svg = $("picture").querySelector("svg");
  if (svg) {
    svg.removeAttribute("height");
    readableText(svg);
  }
  const scores = (info.scores ?? []).map((v, p) => `seat ${p}${state.setup.ai.includes(p) ? " (AI)" : ""}: ${v}`);
  const final = $("final");
  if (info.terminal) {
    final.hidden = false;
    final.dataset.scores = JSON.stringify(info.scores ?? []);
    final.dataset.returns = JSON.stringify(info.returns ?? []);
    final.textContent = `Game over. Final scores: ${scores.join(", ")}. ${winnerText(info.scores ?? [], info.returns ?? [])}`;
    setStatus("Game over.");
  } else {
    final.hidden = true;
    const who = mover === -1 ? "a draw (chance)" : `seat ${mover}${state.setup.ai.includes(mover) ? " (AI)" : " (you)"}`;
    setStatus(`You see seat ${seat}'s view. To move: ${who}. Scores: ${scores.join(", ")}.`);
  }
  // The move list: every legal move of the seat to move when it is a human's; chance
  // outcomes when they are entered by hand.
  const list = $("moves");
  list.innerHTML = "";
  const humansMove = !info.terminal && mover >= 0 && !state.setup.ai.includes(mover);
  if (humansMove) {
    for (const a of legal.actions) list.append(moveButton(a.id, a.notation));
  } else if (mover === -1 && state.setup.manualChance) {
    // A physical table: enter what was drawn. Draws this seat cannot see are not listed
    // (LegalActions for_seat); the server deals those. A sealed position takes server draws
    // only (whether an outcome is possible would tell what the seat cannot see).
    for (const c of state.audience === null ? legal.chanceOutcomes : []) {
      list.append(moveButton(c.action?.id ?? 0, `${c.action?.notation} (${fmtPct(c.probability)})`));
    }
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = "let the server draw";
    b.addEventListener("click", () => void draw());
    li.append(b);
    list.append(li);
  }
  ($("hint") as HTMLButtonElement).disabled = !humansMove;
  // a sealed position is analysed only at its own seat's decisions (the others' options are
  // what it may not see)
  const analysable = state.audience === null || mover === state.audience;
  ($("analyse") as HTMLButtonElement).disabled = !!info.terminal || mover < 0 || !analysable;
}

function moveButton(id: number, label: string): HTMLElement {
  const li = document.createElement("li");
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.dataset.action = String(id);
  b.addEventListener("click", () => void play([id]));
  li.append(b);
  return li;
}

/** A chance outcome drawn by the server (ApplyActions draw_seed): same seed, same game. */
async function draw(): Promise<void> {
  await apply([{ drawSeed: state.setup.seed * 1000 + state.ply }]);
}

async function play(ids: number[]): Promise<void> {
  await apply(ids);
}

async function apply(actions: ActionLike[]): Promise<void> {
  if (!state.position) return;
  const position = state.position;
  const mover = state.info?.currentPlayer ?? 0;
  // the outcomes the viewing seat can tell apart: listed by LegalActions for that seat
  const visible = new Set((state.legal?.chanceOutcomes ?? []).map((o) => o.action?.id ?? 0));
  await advance(async () => {
    const answer = await advisor.applyActions(position, actions);
    state.ply += actions.length;
    for (const a of answer.applied) {
      const id = a.id ?? 0;
      // a draw's notation may begin with the word itself ("draw blue loop"): said once
      if (mover === -1) state.log.push(visible.has(id) ? `draw: ${a.notation.replace(/^draw /, "")}` : "draw: hidden from you");
      else state.log.push(`seat ${mover}${state.setup.ai.includes(mover) ? " (AI)" : ""}: ${a.notation}`);
    }
    if (mover >= 0) {
      // a seat's moves in a row (chance draws between them included) are one turn; the last
      // 12 of them (a solo game is one seat's moves in a row; the server takes at most 64)
      const notations = answer.applied.map((a) => a.notation);
      const earlier = state.last?.seat === mover ? state.last.notations : [];
      state.last = { seat: mover, notations: [...earlier, ...notations].slice(-12) };
    }
    return answer.info!;
  });
}

function renderLog(): void {
  const list = $("log");
  list.innerHTML = "";
  state.log.forEach((line, i) => {
    const item = document.createElement("li");
    item.textContent = line;
    if (i === state.log.length - 1) item.className = "last";
    list.appendChild(item);
  });
  list.scrollTop = list.scrollHeight;
  // (the picture itself marks what the last turn changed: LegalActions `last`)
}

/** After every change: draw chance, let the AI move, or wait for a human. */
async function step(generation: number): Promise<void> {
  const info = state.info!;
  if (info.terminal || generation !== state.generation) return;
  const mover = info.currentPlayer ?? 0;
  if (mover === -1) {
    if (state.setup.manualChance) return;
    await delay(60);
    if (generation === state.generation) await draw();
    return;
  }
  if (!state.setup.ai.includes(mover)) return;
  setStatus(`Seat ${mover} (AI, level ${state.setup.level}) is thinking...`);
  const turn = state.aiTurn;
  state.aiTurn = null; // a token continues once
  const previous = turn && turn.generation === generation && turn.ply === state.ply ? turn.token : "";
  const position = state.position!;
  const suggest = (continueFrom: string) =>
    advisor.suggestMove(position, { level: state.setup.level, seed: state.setup.seed * 1000 + state.ply, continueFrom });
  try {
    let answer;
    try {
      answer = await suggest(previous);
    } catch (e) {
      // a token the server no longer keeps (expired, another server process): ask afresh
      if (!previous || !(e instanceof NotFoundError || e instanceof InvalidArgumentError)) throw e;
      answer = await suggest("");
    }
    await delay(120);
    if (generation === state.generation) {
      // the move is applied next (ply + 1); the token continues the AI's turn there
      if (answer.continuation) state.aiTurn = { generation, ply: state.ply + 1, token: answer.continuation };
      if (isSealed(position) && answer.info) {
        // a sealed position: the server played the move and sealed the next position
        // (a sealed position takes only its own seat's decisions)
        const next = answer.info;
        await advance(async () => {
          state.ply += 1;
          state.log.push(`seat ${mover} (AI): ${answer.action?.notation ?? ""}`);
          const notation = answer.action?.notation ?? "";
          const earlier = state.last?.seat === mover ? state.last.notations : [];
          state.last = { seat: mover, notations: [...earlier, notation].slice(-12) };
          return next;
        });
      } else {
        await play([answer.action?.id ?? 0]);
      }
    }
  } catch (e) {
    showError(e);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// --- clicking the picture --------------------------------------------------------------
function onPictureClick(target: EventTarget | null): void {
  const el = (target as Element | null)?.closest?.("[data-action]");
  if (!el) return;
  const ids = (el.getAttribute("data-action") || "").split(/\s+/).filter(Boolean).map(Number);
  if (ids.length === 1) void play(ids);
  else if (ids.length > 1) openChooser(ids);
}

function openChooser(ids: number[]): void {
  const box = $("chooser");
  const list = $("chooser-list");
  list.innerHTML = "";
  const names = new Map((state.legal?.actions ?? []).map((a) => [a.id, a.notation]));
  for (const id of ids) list.append(moveButton(id, names.get(id) ?? String(id)));
  box.hidden = false;
  (list.querySelector("button") as HTMLButtonElement | null)?.focus();
}

function closeChooser(): void {
  $("chooser").hidden = true;
}

// --- hints and analysis ------------------------------------------------------------------
function showAnalysis(analysis: Analysis, live: boolean): void {
  const table = $("hints");
  const moves = analysis.moves;
  const players = state.setup.players;
  const head = `<caption>${live ? "Analysing" : "Hints"}: ${analysis.iterations ?? 0} iterations` +
    `${analysis.partial ? " (partial)" : ""}</caption><tr><th>move</th><th>win %</th>` +
    `<th class="expected">expected scores</th><th class="visits">visits</th><th>why</th>` +
    `<th class="then">then</th><th></th></tr>`;
  table.innerHTML = head;
  moves.slice(0, 8).forEach((m: MoveAnalysis, i) => {
    const tr = document.createElement("tr");
    const pv = m.principalVariation.slice(1).map((a) => a.notation).join(", ");
    const cells = [
      // an exact value (the rest of the game solved) is marked, not estimated
      m.action?.notation ?? "", fmtPct(m.winProbability) + (m.exact ? " (exact)" : ""),
      m.expectedScores.slice(0, players).map((v) => v.toFixed(1)).join(" / "),
      String(m.visits), m.reason, pv,
    ];
    const columns = ["move", "win", "expected", "visits", "why", "then"];
    cells.forEach((text, column) => {
      const td = document.createElement("td");
      td.textContent = text;
      td.className = columns[column];
      tr.append(td);
    });
    const td = document.createElement("td");
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = "play";
    b.dataset.action = String(m.action?.id ?? 0);
    b.addEventListener("click", () => void play([m.action?.id ?? 0]));
    td.append(b);
    tr.append(td);
    if (i === 0) tr.className = "best";
    table.append(tr);
  });
  const best = moves[0];
  state.hint = best ? best.principalVariation.map((a) => a.id) : [];
  if (best && !state.hint.length) state.hint = [best.action?.id ?? 0];
  highlight();
}

/** Marks the hinted move in the picture (its principal variation's later moves are not
 * legal yet, so only the first step has an element now). */
function highlight(): void {
  const [first] = state.hint;
  document.querySelectorAll("#picture [data-action]").forEach((el) => {
    const ids = (el.getAttribute("data-action") || "").split(/\s+/).map(Number);
    el.classList.toggle("hint", first !== undefined && ids.includes(first));
  });
  document.querySelectorAll("#moves button").forEach((el) => {
    el.classList.toggle("hint", first !== undefined && Number((el as HTMLElement).dataset.action) === first);
  });
}

/** Analyze, continuing from this position's last search when there is one: a hint pressed
 * twice, or an analysis after a hint, searches deeper instead of starting over. A token the
 * server no longer keeps (or whose search is still stopping) means a fresh search. */
async function* searchDeeper(
  opts: { intervalMs: number; iterations?: number; timeMs?: number; signal?: AbortSignal },
): AsyncGenerator<{ analysis: Analysis; final: boolean }, void, undefined> {
  const position = state.position!;
  const previous = state.continuation?.position === position ? state.continuation.token : "";
  state.continuation = null; // a token continues once
  const stream = (continueFrom: string) =>
    advisor.analyze(position, { ...opts, maxMoves: 8, seed: state.setup.seed, continueFrom });
  let updates = stream(previous);
  for (let attempt = 0; ; attempt++) {
    try {
      for await (const update of updates) {
        if (update.continuation && state.position === position) state.continuation = { position, token: update.continuation };
        if (update.analysis) yield { analysis: update.analysis, final: update.final };
      }
      return;
    } catch (e) {
      const stale = e instanceof NotFoundError || e instanceof FailedPreconditionError;
      if (!previous || attempt > 0 || !stale) throw e;
      updates = stream("");
    }
  }
}

async function hint(): Promise<void> {
  if (!state.position) return;
  clearError();
  const button = $("hint") as HTMLButtonElement;
  button.disabled = true;
  try {
    // 3,000 more iterations per press (about a second): enough to rank the moves that matter,
    // and each press adds to the last one's trees.
    for await (const { analysis, final } of searchDeeper({ intervalMs: 60000, iterations: 3000 })) {
      if (final) showAnalysis(analysis, false);
    }
  } catch (e) {
    showError(e);
  } finally {
    button.disabled = false;
  }
}

function stopAnalysis(): void {
  if (state.analysis) {
    state.analysis.abort();
    state.analysis = null;
  }
  const b = $("analyse");
  b.textContent = "Analyse";
  b.setAttribute("aria-pressed", "false");
}

async function toggleAnalysis(): Promise<void> {
  if (state.analysis) {
    stopAnalysis();
    $("analysis-state").textContent = "Analysis stopped.";
    return;
  }
  if (!state.position) return;
  clearError();
  const controller = new AbortController();
  state.analysis = controller;
  const b = $("analyse");
  b.textContent = "Stop analysis";
  b.setAttribute("aria-pressed", "true");
  $("analysis-state").textContent = "Analysing...";
  try {
    for await (const { analysis, final } of searchDeeper({ intervalMs: 300, timeMs: 30000, signal: controller.signal })) {
      showAnalysis(analysis, !final);
    }
    if (state.analysis === controller) $("analysis-state").textContent = "Analysis finished.";
  } catch (e) {
    if (!(e instanceof CancelledError)) showError(e); // stopped: the server stopped the search
  } finally {
    if (state.analysis === controller) stopAnalysis();
  }
}

// --- paste and export ------------------------------------------------------------------
async function loadPasted(): Promise<void> {
  const text = ($("position-hex") as HTMLTextAreaElement).value.trim();
  if (!text) return;
  let position: Position;
  try {
    // A seat's view as JSON (StructuredPosition, as exported below: the server samples what
    // that seat cannot see), or the encoded position as hex.
    position = text.startsWith("{")
      ? create(PositionSchema, { game: state.setup.game, structured: fromJson(StructuredPositionSchema, JSON.parse(text)) })
      : text.startsWith("sealed:")
        ? sealedPosition(hexToBytes(text.slice("sealed:".length)))
        : create(PositionSchema, { game: state.setup.game, encoded: hexToBytes(text) });
  } catch (e) {
    showError(e instanceof PageError ? e : new PageError(`not a position: ${(e as Error).message}`, "position"));
    return;
  }
  await openPosition(position);
}

async function exportView(): Promise<void> {
  if (!state.position) return;
  try {
    const view = await advisor.viewPosition(state.position, viewSeat());
    const json = toJson(StructuredPositionSchema, view.structured!);
    ($("position-hex") as HTMLTextAreaElement).value = JSON.stringify(json, null, 1);
  } catch (e) {
    showError(e);
  }
}

// --- wiring ----------------------------------------------------------------------------
async function main(): Promise<void> {
  const { position, sealed } = readUrl();
  try {
    state.games = await advisor.listGames();
    state.sealing = (await advisor.sealingOffered()).sealing;
  } catch (e) {
    showError(e);
    return;
  }
  if (!state.games.some((g) => g.name === state.setup.game)) state.setup.game = state.games[0]?.name ?? "";
  fillForm();
  $("game").addEventListener("change", () => {
    readForm();
    fillPlayers();
  });
  $("players").addEventListener("change", () => {
    readForm();
    state.setup.ai = Array.from({ length: state.setup.players - 1 }, (_, i) => i + 1);
    fillPlayers();
  });
  $("setup").addEventListener("submit", (ev) => {
    ev.preventDefault();
    readForm();
    void newGame();
  });
  $("picture").addEventListener("click", (ev) => onPictureClick(ev.target));
  $("picture").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      onPictureClick(ev.target);
    }
  });
  $("hint").addEventListener("click", () => void hint());
  $("analyse").addEventListener("click", () => void toggleAnalysis());
  $("load").addEventListener("click", () => void loadPasted());
  $("export-view").addEventListener("click", () => void exportView());
  $("chooser-close").addEventListener("click", closeChooser);
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") closeChooser();
    const tag = (ev.target as HTMLElement).tagName;
    if (["INPUT", "TEXTAREA", "SELECT"].includes(tag) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key === "h" && !($("hint") as HTMLButtonElement).disabled) void hint();
    if (ev.key === "a" && !($("analyse") as HTMLButtonElement).disabled) void toggleAnalysis();
  });
  if (sealed) {
    try {
      await openPosition(sealedPosition(hexToBytes(sealed)));
    } catch (e) {
      showError(e);
    }
  } else if (position) {
    try {
      await openPosition(create(PositionSchema, { game: state.setup.game, encoded: hexToBytes(position) }));
    } catch (e) {
      showError(e);
    }
  } else {
    await newGame();
  }
}

void main();
