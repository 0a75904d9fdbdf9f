// Analyze cancel latency from the TypeScript client (bench/service.py runs this):
//   node bench/cancel.mjs URL [trials]
// Each trial starts an Analyze (15 s budget, a partial every 50 ms), waits for its first
// partial, leaves the loop (which aborts the fetch) and prints one JSON line: when it
// aborted (epoch ms, sub-ms precision, to match the server's clock) and how long until a
// tiny RankMoves was admitted again (the slot freed; includes that probe's round trip).
import { AdvisorClient, ResourceExhaustedError } from "../dist/index.js";

const [url, trialsArg] = process.argv.slice(2);
const trials = Number(trialsArg ?? 20);
const advisor = new AdvisorClient(url);
const info = await advisor.newGame("botanik", { seed: 1 });
const now = () => performance.timeOrigin + performance.now();

for (let trial = 0; trial < trials; trial++) {
  const stream = advisor.analyze(info.position, { timeMs: 15_000, intervalMs: 50, seed: trial });
  await stream.next();
  const aborted = now();
  await stream.return(undefined);
  for (;;) {
    try {
      await advisor.rankMoves(info.position, { iterations: 1 });
      break;
    } catch (e) {
      if (!(e instanceof ResourceExhaustedError)) throw e;
    }
  }
  console.log(JSON.stringify({ trial, aborted_epoch_ms: aborted, slot_free_ms: now() - aborted }));
}
