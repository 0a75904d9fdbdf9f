// Without a server: a fetch that fails is an UnavailableError (not UNKNOWN), and answers'
// bigint counts go through JSON.stringify with jsonReplacer.
// Run: npm test.

import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";

import { AdvisorClient, UnavailableError, jsonReplacer, stringify } from "../dist/index.js";

/** A loopback port nothing listens on: bound, then closed. */
async function deadPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

for (const protocol of ["connect", "grpc-web"]) {
  test(`a refused connection is UnavailableError (${protocol})`, async () => {
    const client = new AdvisorClient({ baseUrl: `http://127.0.0.1:${await deadPort()}`, protocol });
    await assert.rejects(client.listGames(), (error) => {
      assert.ok(error instanceof UnavailableError, `${error?.constructor?.name}: ${error}`);
      assert.equal(error.code, "UNAVAILABLE");
      assert.match(error.message, /could not be reached/);
      return true;
    });
  });
}

test("bigint counts go through JSON.stringify", () => {
  const answer = { visits: 1234n, seed: 2n ** 63n - 1n, nested: [{ iterations: 5n }], win: 0.5 };
  assert.throws(() => JSON.stringify(answer), TypeError);
  const parsed = JSON.parse(JSON.stringify(answer, jsonReplacer));
  assert.deepEqual(parsed, { visits: 1234, seed: "9223372036854775807", nested: [{ iterations: 5 }], win: 0.5 });
  assert.equal(stringify({ n: 7n }), '{"n":7}');
});
