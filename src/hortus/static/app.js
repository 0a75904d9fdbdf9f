/* hortus page: built from web/ by web/build.mjs (sources sha256 0deda6b7d24a7e06e3a861564f61b83de68614cc24130a683abd93308f59a1ae); do not edit */
(() => {
  var __defProp = Object.defineProperty;
  var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
  var __publicField = (obj, key, value) => __defNormalProp(obj, typeof key !== "symbol" ? key + "" : key, value);

  // web/src/api.ts
  var SERVICE = "/hortus.v1.Advisor/";
  var HortusError = class extends Error {
    constructor(code, message, field = "") {
      super(message);
      __publicField(this, "code");
      __publicField(this, "field");
      this.code = code;
      this.field = field;
    }
    /** What a person reads: the message, and the request field it is about. */
    readable() {
      const where = this.field ? ` (field: ${this.field})` : "";
      return `${this.message}${where}`;
    }
  };
  function readVarint(bytes, pos) {
    let value = 0;
    let shift = 0;
    for (; ; ) {
      const b = bytes[pos++];
      value += (b & 127) * 2 ** shift;
      if (b < 128) return [value, pos];
      shift += 7;
    }
  }
  function fields(bytes) {
    const out = [];
    let pos = 0;
    while (pos < bytes.length) {
      const [key, p] = readVarint(bytes, pos);
      pos = p;
      const wire = key & 7;
      if (wire === 2) {
        const [len, q] = readVarint(bytes, pos);
        out.push([key >>> 3, bytes.subarray(q, q + len)]);
        pos = q + len;
      } else if (wire === 0) {
        pos = readVarint(bytes, pos)[1];
      } else if (wire === 5) {
        pos += 4;
      } else if (wire === 1) {
        pos += 8;
      } else {
        break;
      }
    }
    return out;
  }
  function base64ToBytes(text) {
    const padded = text.replace(/-/g, "+").replace(/_/g, "/");
    const raw = atob(padded + "=".repeat((4 - padded.length % 4) % 4));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  }
  function badRequestField(details) {
    if (!Array.isArray(details)) return null;
    for (const d of details) {
      if (!d || typeof d !== "object") continue;
      const detail = d;
      if (detail.type !== "google.rpc.BadRequest" || !detail.value) continue;
      const decoder = new TextDecoder();
      for (const [num, violation] of fields(base64ToBytes(detail.value))) {
        if (num !== 1) continue;
        let field = "";
        let description = "";
        for (const [n, v] of fields(violation)) {
          if (n === 1) field = decoder.decode(v);
          if (n === 2) description = decoder.decode(v);
        }
        return [field, description];
      }
    }
    return null;
  }
  function errorFrom(body, status) {
    const e = body && typeof body === "object" ? body : {};
    const violation = badRequestField(e.details);
    const message = violation && violation[1] ? violation[1] : e.message || `HTTP ${status}`;
    return new HortusError(e.code || "unknown", message, violation ? violation[0] : "");
  }
  async function call(method, request, signal) {
    let response;
    try {
      response = await fetch(SERVICE + method, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Connect-Protocol-Version": "1" },
        body: JSON.stringify(request),
        signal
      });
    } catch (e) {
      if (e.name === "AbortError") throw e;
      throw new HortusError("unavailable", "the hortus server cannot be reached");
    }
    const text = await response.text();
    let body = {};
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      throw new HortusError("internal", `unexpected answer (HTTP ${response.status})`);
    }
    if (!response.ok) throw errorFrom(body, response.status);
    return body;
  }
  async function stream(method, request, onMessage, signal) {
    const json = new TextEncoder().encode(JSON.stringify(request));
    const envelope = new Uint8Array(5 + json.length);
    new DataView(envelope.buffer).setUint32(1, json.length);
    envelope.set(json, 5);
    let response;
    try {
      response = await fetch(SERVICE + method, {
        method: "POST",
        headers: { "Content-Type": "application/connect+json", "Connect-Protocol-Version": "1" },
        body: envelope,
        signal
      });
    } catch (e) {
      if (e.name === "AbortError") return;
      throw new HortusError("unavailable", "the hortus server cannot be reached");
    }
    if (!response.ok || !response.body) {
      const text = await response.text();
      let body = {};
      try {
        body = JSON.parse(text);
      } catch {
      }
      throw errorFrom(body, response.status);
    }
    const reader = response.body.getReader();
    let buffer = new Uint8Array(0);
    const decoder = new TextDecoder();
    try {
      for (; ; ) {
        const { done, value } = await reader.read();
        if (done) break;
        const joined = new Uint8Array(buffer.length + value.length);
        joined.set(buffer);
        joined.set(value, buffer.length);
        buffer = joined;
        while (buffer.length >= 5) {
          const flags = buffer[0];
          const length = new DataView(buffer.buffer, buffer.byteOffset).getUint32(1);
          if (buffer.length < 5 + length) break;
          const payload = JSON.parse(decoder.decode(buffer.subarray(5, 5 + length)));
          buffer = buffer.slice(5 + length);
          if (flags & 2) {
            if (payload.error) throw errorFrom(payload.error, 200);
            return;
          }
          onMessage(payload);
        }
      }
    } catch (e) {
      if (e.name === "AbortError") return;
      throw e;
    }
  }
  function hexToBase64(hex) {
    const clean = hex.replace(/\s+/g, "");
    if (!/^([0-9a-fA-F]{2})*$/.test(clean)) throw new HortusError("invalid_argument", "not a hex string", "position");
    let raw = "";
    for (let i = 0; i < clean.length; i += 2) raw += String.fromCharCode(parseInt(clean.slice(i, i + 2), 16));
    return btoa(raw);
  }
  function base64ToHex(b64) {
    return Array.from(base64ToBytes(b64), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // web/src/main.ts
  var $ = (id) => document.getElementById(id);
  var state = {
    setup: { game: "botanik", players: 2, level: 3, seed: 1, ai: [1], manualChance: false },
    games: [],
    position: null,
    info: null,
    legal: null,
    ply: 0,
    generation: 0,
    // bumped by every new game: stale AI steps stop
    busy: false,
    analysis: null,
    hint: []
  };
  function showError(e) {
    const box = $("error");
    if (e instanceof HortusError) box.textContent = e.readable();
    else if (e instanceof Error) box.textContent = e.message;
    else box.textContent = String(e);
    box.hidden = false;
  }
  function clearError() {
    $("error").hidden = true;
    $("error").textContent = "";
  }
  function setStatus(text) {
    $("status").textContent = text;
  }
  function humanSeats() {
    const out = [];
    for (let p = 0; p < state.setup.players; p++) if (!state.setup.ai.includes(p)) out.push(p);
    return out;
  }
  function viewSeat() {
    const mover = state.info?.currentPlayer ?? 0;
    const humans = humanSeats();
    if (humans.includes(mover)) return mover;
    return humans.length ? humans[0] : 0;
  }
  function fmtPct(x) {
    return `${Math.round((x ?? 0) * 100)}%`;
  }
  function readUrl() {
    const q = new URLSearchParams(location.search);
    const s = state.setup;
    if (q.get("game")) s.game = q.get("game");
    if (q.get("players")) s.players = parseInt(q.get("players"), 10) || s.players;
    if (q.get("level")) s.level = parseInt(q.get("level"), 10) || s.level;
    if (q.get("seed")) s.seed = parseInt(q.get("seed"), 10) || 0;
    if (q.get("ai") !== null) s.ai = q.get("ai").split(",").filter((x) => x !== "").map((x) => parseInt(x, 10));
    else s.ai = Array.from({ length: Math.max(s.players - 1, 0) }, (_, i) => i + 1);
    if (q.get("players") === "1") s.ai = [];
    s.manualChance = q.get("chance") === "manual";
    return { position: q.get("position") };
  }
  function link(withPosition) {
    const s = state.setup;
    const q = new URLSearchParams({
      game: s.game,
      players: String(s.players),
      level: String(s.level),
      seed: String(s.seed),
      ai: s.ai.join(",")
    });
    if (s.manualChance) q.set("chance", "manual");
    if (withPosition && state.position?.encoded) q.set("position", base64ToHex(state.position.encoded));
    return `${location.origin}${location.pathname}?${q.toString()}`;
  }
  function fillForm() {
    const s = state.setup;
    const gameSelect = $("game");
    gameSelect.innerHTML = "";
    for (const g of state.games) {
      const o = document.createElement("option");
      o.value = g.name;
      o.textContent = g.name.replace(/_/g, " ");
      gameSelect.append(o);
    }
    gameSelect.value = s.game;
    fillPlayers();
    $("level").value = String(s.level);
    $("seed").value = String(s.seed);
    $("manual-chance").checked = s.manualChance;
  }
  function fillPlayers() {
    const s = state.setup;
    const info = state.games.find((g) => g.name === s.game);
    const select = $("players");
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
  function readForm() {
    const s = state.setup;
    s.game = $("game").value;
    s.players = parseInt($("players").value, 10);
    s.level = parseInt($("level").value, 10);
    s.seed = parseInt($("seed").value, 10) || 0;
    s.manualChance = $("manual-chance").checked;
    s.ai = Array.from(document.querySelectorAll("#ai-seats input")).filter((i) => i.checked && parseInt(i.dataset.seat, 10) < s.players).map((i) => parseInt(i.dataset.seat, 10));
  }
  async function newGame() {
    state.generation++;
    state.ply = 0;
    const s = state.setup;
    history.replaceState(null, "", link(false));
    await advance(async () => (await call("NewGame", { game: s.game, players: s.players, seed: s.seed })).info);
  }
  async function openPosition(position) {
    state.generation++;
    await advance(async () => (await call("ApplyActions", { position, actions: [] })).info);
  }
  async function show(info) {
    state.info = info;
    state.position = info.position;
    state.hint = [];
    $("hints").innerHTML = "";
    const hex = info.position.encoded ? base64ToHex(info.position.encoded) : "";
    $("position-hex").value = hex;
    $("share").value = link(true);
    state.legal = await call("LegalActions", {
      position: info.position,
      forSeat: viewSeat(),
      picture: true
    });
    render();
  }
  function setBusy(busy) {
    state.busy = busy;
    document.body.dataset.busy = busy ? "1" : "0";
  }
  async function advance(load) {
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
  function render() {
    const info = state.info;
    const legal = state.legal;
    const mover = info.currentPlayer ?? 0;
    const seat = viewSeat();
    $("picture").innerHTML = legal.picture || "";
    const svg = $("picture").querySelector("svg");
    if (svg) svg.removeAttribute("height");
    const scores = (info.scores ?? []).map((v, p) => `seat ${p}${state.setup.ai.includes(p) ? " (AI)" : ""}: ${v}`);
    const final = $("final");
    if (info.terminal) {
      const best = Math.max(...info.scores ?? [0]);
      const winners = (info.scores ?? []).map((v, p) => v === best ? p : -1).filter((p) => p >= 0);
      final.hidden = false;
      final.dataset.scores = JSON.stringify(info.scores ?? []);
      final.textContent = `Game over. Final scores: ${scores.join(", ")}. Winner: ${winners.map((p) => `seat ${p}`).join(" and ")}.`;
      setStatus("Game over.");
    } else {
      final.hidden = true;
      const who = mover === -1 ? "a draw (chance)" : `seat ${mover}${state.setup.ai.includes(mover) ? " (AI)" : " (you)"}`;
      setStatus(`You see seat ${seat}'s view. To move: ${who}. Scores: ${scores.join(", ")}.`);
    }
    const list = $("moves");
    list.innerHTML = "";
    const humansMove = !info.terminal && mover >= 0 && !state.setup.ai.includes(mover);
    if (humansMove) {
      for (const a of legal.actions ?? []) list.append(moveButton(a.id ?? 0, a.notation ?? ""));
    } else if (mover === -1 && state.setup.manualChance) {
      for (const c of legal.chanceOutcomes ?? []) {
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
    $("hint").disabled = !humansMove;
    $("analyse").disabled = !!info.terminal || mover < 0;
  }
  function moveButton(id, label) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.dataset.action = String(id);
    b.addEventListener("click", () => void play([id]));
    li.append(b);
    return li;
  }
  async function draw() {
    await apply([{ drawSeed: String(state.setup.seed * 1e3 + state.ply) }]);
  }
  async function play(ids) {
    await apply(ids.map((id) => ({ id })));
  }
  async function apply(actions) {
    if (!state.position) return;
    const position = state.position;
    await advance(async () => {
      const answer = await call("ApplyActions", { position, actions });
      state.ply += actions.length;
      return answer.info;
    });
  }
  async function step(generation) {
    const info = state.info;
    const legal = state.legal;
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
    try {
      const answer = await call("SuggestMove", {
        position: state.position,
        level: state.setup.level,
        limits: { seed: String(state.setup.seed * 1e3 + state.ply) }
      });
      await delay(120);
      if (generation === state.generation) await play([answer.action.id ?? 0]);
    } catch (e) {
      showError(e);
    }
  }
  function delay(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
  function onPictureClick(target) {
    const el = target?.closest?.("[data-action]");
    if (!el) return;
    const ids = (el.getAttribute("data-action") || "").split(/\s+/).filter(Boolean).map(Number);
    if (ids.length === 1) void play(ids);
    else if (ids.length > 1) openChooser(ids);
  }
  function openChooser(ids) {
    const box = $("chooser");
    const list = $("chooser-list");
    list.innerHTML = "";
    const names = new Map((state.legal?.actions ?? []).map((a) => [a.id ?? 0, a.notation ?? ""]));
    for (const id of ids) list.append(moveButton(id, names.get(id) ?? String(id)));
    box.hidden = false;
    list.querySelector("button")?.focus();
  }
  function closeChooser() {
    $("chooser").hidden = true;
  }
  function showAnalysis(analysis, live) {
    const table = $("hints");
    const moves = analysis.moves ?? [];
    const players = state.setup.players;
    const head = `<caption>${live ? "Analysing" : "Hints"}: ${analysis.iterations ?? 0} iterations${analysis.partial ? " (partial)" : ""}</caption><tr><th>move</th><th>win %</th><th>expected scores</th><th>visits</th><th>why</th><th>then</th><th></th></tr>`;
    table.innerHTML = head;
    moves.slice(0, 8).forEach((m, i) => {
      const tr = document.createElement("tr");
      const pv = (m.principalVariation ?? []).slice(1).map((a) => a.notation).join(", ");
      const cells = [
        m.action?.notation ?? "",
        fmtPct(m.winProbability),
        (m.expectedScores ?? []).slice(0, players).map((v) => v.toFixed(1)).join(" / "),
        String(m.visits ?? 0),
        m.reason ?? "",
        pv
      ];
      for (const text of cells) {
        const td2 = document.createElement("td");
        td2.textContent = text;
        tr.append(td2);
      }
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
    state.hint = best ? (best.principalVariation ?? []).map((a) => a.id ?? 0) : [];
    if (best && !state.hint.length) state.hint = [best.action?.id ?? 0];
    highlight();
  }
  function highlight() {
    const [first] = state.hint;
    document.querySelectorAll("#picture [data-action]").forEach((el) => {
      const ids = (el.getAttribute("data-action") || "").split(/\s+/).map(Number);
      el.classList.toggle("hint", first !== void 0 && ids.includes(first));
    });
    document.querySelectorAll("#moves button").forEach((el) => {
      el.classList.toggle("hint", first !== void 0 && Number(el.dataset.action) === first);
    });
  }
  async function hint() {
    if (!state.position) return;
    clearError();
    const button = $("hint");
    button.disabled = true;
    try {
      const iterations = 3e3;
      const answer = await call("RankMoves", {
        position: state.position,
        maxMoves: 8,
        limits: { iterations: String(iterations), seed: String(state.setup.seed) }
      });
      showAnalysis(answer.analysis, false);
    } catch (e) {
      showError(e);
    } finally {
      button.disabled = false;
    }
  }
  function stopAnalysis() {
    if (state.analysis) {
      state.analysis.abort();
      state.analysis = null;
    }
    const b = $("analyse");
    b.textContent = "Analyse";
    b.setAttribute("aria-pressed", "false");
  }
  async function toggleAnalysis() {
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
      await stream("Analyze", {
        position: state.position,
        intervalMs: 300,
        maxMoves: 8,
        limits: { timeMs: 3e4, seed: String(state.setup.seed) }
      }, (m) => showAnalysis(m.analysis, !m.final), controller.signal);
      if (state.analysis === controller) $("analysis-state").textContent = "Analysis finished.";
    } catch (e) {
      showError(e);
    } finally {
      if (state.analysis === controller) stopAnalysis();
    }
  }
  async function loadPasted() {
    const text = $("position-hex").value.trim();
    if (!text) return;
    let position;
    try {
      position = text.startsWith("{") ? { game: state.setup.game, structured: JSON.parse(text) } : { game: state.setup.game, encoded: hexToBase64(text) };
    } catch (e) {
      showError(e instanceof SyntaxError ? new HortusError("invalid_argument", `not JSON: ${e.message}`, "position") : e);
      return;
    }
    await openPosition(position);
  }
  async function exportView() {
    if (!state.position) return;
    try {
      const answer = await call("ViewPosition", { position: state.position, seat: viewSeat() });
      $("position-hex").value = JSON.stringify(answer.structured, null, 1);
    } catch (e) {
      showError(e);
    }
  }
  async function main() {
    const { position } = readUrl();
    try {
      const list = await call("ListGames", {});
      state.games = list.games ?? [];
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
      const tag = ev.target.tagName;
      if (["INPUT", "TEXTAREA", "SELECT"].includes(tag) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      if (ev.key === "h" && !$("hint").disabled) void hint();
      if (ev.key === "a" && !$("analyse").disabled) void toggleAnalysis();
    });
    if (position) {
      try {
        await openPosition({ game: state.setup.game, encoded: hexToBase64(position) });
      } catch (e) {
        showError(e);
      }
    } else {
      await newGame();
    }
  }
  void main();
})();
