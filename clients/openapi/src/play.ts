// A whole Botanik game against a hortus server, through a client generated from its
// /openapi.json alone: openapi-typescript's types (src/api.d.ts, `npm run generate`) and
// openapi-fetch's calls. Both seats ask SuggestMove at level 1; chance is drawn by the server
// (ApplyActions drawSeed); the first position is also analysed as an NDJSON stream, read line
// by line. Prints one JSON line: the moves played, the final scores and the stream's lines.
// Run: node dist/play.js http://127.0.0.1:PORT
import createClient from "openapi-fetch";

import type { components, paths } from "./api.js";

type Schemas = components["schemas"];
type Position = Schemas["hortus.v1.Position"];
type PositionInfo = Schemas["hortus.v1.PositionInfo"];
type ConnectError = Schemas["ConnectError"];

const baseUrl = process.argv[2];
if (!baseUrl) throw new Error("usage: node dist/play.js http://HOST:PORT");
const client = createClient<paths>({ baseUrl });

/** The answer's data, or an Error with the Connect error's code and message. */
function ok<T>(answer: { data?: T; error?: ConnectError | unknown }, what: string): T {
  if (answer.data === undefined) {
    const error = answer.error as ConnectError | undefined;
    throw new Error(`${what}: ${error?.code ?? "no answer"} ${error?.message ?? ""}`);
  }
  return answer.data;
}

async function analyseAsNdjson(position: Position): Promise<number> {
  // A stream: the body is one JSON request, the answer one JSON object a line, the last {"end": ...}.
  const answer = await client.POST("/hortus.v1.Advisor/Analyze", {
    body: { position, limits: { iterations: 200, seed: 1 }, intervalMs: 50 },
    parseAs: "text",
  });
  const text = ok(answer, "Analyze") as unknown as string;
  type Line = paths["/hortus.v1.Advisor/Analyze"]["post"]["responses"]["200"]["content"]["application/x-ndjson"];
  const lines = text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Line);
  const end = lines.at(-1)?.end;
  if (end?.code !== "ok") throw new Error(`Analyze ended ${JSON.stringify(end)}`);
  if (!lines.slice(0, -1).every((line) => line.result !== undefined)) throw new Error("a stream line without result");
  return lines.length;
}

async function main(): Promise<void> {
  const started = ok(await client.POST("/hortus.v1.Advisor/NewGame", { body: { game: "botanik", players: 2, seed: 7 } }), "NewGame");
  let info: PositionInfo = started.info ?? {};
  const streamLines = await analyseAsNdjson(info.position ?? {});
  const games = ok(await client.GET("/hortus.v1.Advisor/ListGames", {
    params: { query: { connect: "v1", encoding: "json", message: JSON.stringify({}) } },
  }), "ListGames (Connect GET)");
  if (!(games.games ?? []).some((g) => g.name === "botanik")) throw new Error("botanik is not listed");
  let moves = 0;
  let draws = 0;
  while (!info.terminal) {
    const position = info.position ?? {};
    const mover = info.currentPlayer ?? 0; // proto3 JSON leaves a 0 out
    if (mover === -1) {
      const applied = ok(await client.POST("/hortus.v1.Advisor/ApplyActions", {
        body: { position, actions: [{ drawSeed: String(1000 + draws) }] },
      }), "ApplyActions (draw)");
      info = applied.info ?? {};
      draws++;
      continue;
    }
    const suggestion = ok(await client.POST("/hortus.v1.Advisor/SuggestMove", {
      body: { position, level: 1, limits: { seed: String(moves) } },
    }), "SuggestMove");
    const id = suggestion.action?.id;
    if (id === undefined) throw new Error("SuggestMove answered no action");
    const applied = ok(await client.POST("/hortus.v1.Advisor/ApplyActions", { body: { position, actions: [{ id }] } }),
      "ApplyActions");
    info = applied.info ?? {};
    moves++;
    if (moves > 500) throw new Error("no end after 500 moves");
  }
  // A client mistake comes back as the documented error JSON.
  const wrong = await client.POST("/hortus.v1.Advisor/NewGame", { body: { game: "no-such-game" } });
  console.log(JSON.stringify({
    moves, draws, streamLines, scores: info.scores ?? [], returns: info.returns ?? [],
    error: { code: (wrong.error as ConnectError | undefined)?.code, status: wrong.response.status },
  }));
}

await main();
