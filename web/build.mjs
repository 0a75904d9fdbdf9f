// Builds the page into src/hortus/static (shipped in the Python package, so `pip install .`
// needs no node): app.js bundled by esbuild from src/main.ts, index.html and style.css copied.
// The bundle's first line records a hash of the sources; tests/test_page_assets.py recomputes
// it, so CI fails when the shipped assets are older than web/. `node build.mjs --check`
// rebuilds in memory and fails if the shipped files differ byte for byte.
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "src", "hortus", "static");

function sources() {
  const files = ["index.html", "style.css"];
  for (const name of readdirSync(join(here, "src")).sort()) files.push(`src/${name}`);
  return files.sort();
}

export function sourceHash() {
  const h = createHash("sha256");
  for (const name of sources()) {
    h.update(name + "\0");
    h.update(readFileSync(join(here, name)));
    h.update("\0");
  }
  return h.digest("hex");
}

const banner = `/* hortus page: built from web/ by web/build.mjs (sources sha256 ${sourceHash()}); do not edit */`;
const result = await esbuild.build({
  entryPoints: [join(here, "src", "main.ts")],
  bundle: true,
  absWorkingDir: join(here, ".."), // the path comments in the bundle do not depend on the cwd
  format: "iife",
  target: "es2020",
  charset: "utf8",
  legalComments: "none",
  banner: { js: banner },
  write: false,
});
const built = {
  "app.js": result.outputFiles[0].text,
  "index.html": readFileSync(join(here, "index.html"), "utf8"),
  "style.css": readFileSync(join(here, "style.css"), "utf8"),
};
if (process.argv.includes("--check")) {
  let stale = [];
  for (const [name, text] of Object.entries(built)) {
    let shipped = "";
    try { shipped = readFileSync(join(out, name), "utf8"); } catch { /* missing */ }
    if (shipped !== text) stale.push(name);
  }
  if (stale.length) {
    console.error(`src/hortus/static is out of date (${stale.join(", ")}): run node web/build.mjs`);
    process.exit(1);
  }
  console.log("src/hortus/static matches web/");
} else {
  mkdirSync(out, { recursive: true });
  for (const [name, text] of Object.entries(built)) writeFileSync(join(out, name), text);
  console.log(`built ${Object.keys(built).map((n) => relative(join(here, ".."), join(out, n))).join(", ")}`);
}
