// Builds the page into src/hortus/static (shipped in the Python package, so `pip install .`
// needs no node): app.js bundled by esbuild from src/main.ts and the TypeScript client it
// imports (clients/typescript: its wrapper, the messages generated from proto/ and its pinned
// runtime, @bufbuild/protobuf and @connectrpc/connect-web), index.html and style.css copied.
// Needs `npm ci` here and in clients/typescript; the client's messages are generated first
// (buf generate, as `npm run generate` there), so they always match proto/.
// The bundle's first line records a hash of the sources (the page's, the client's wrapper,
// the protos, both lock files); tests/web/test_page_assets.py recomputes it, so CI fails when the
// shipped assets are older than their sources. `node build.mjs --check` rebuilds in memory
// and fails if the shipped files differ byte for byte.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const out = join(root, "src", "hortus", "static");
const client = join(root, "clients", "typescript");

function protos(folder) {
  const found = [];
  for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
    const name = `${folder}/${entry.name}`;
    if (entry.isDirectory()) found.push(...protos(name));
    else if (entry.name.endsWith(".proto")) found.push(name);
  }
  return found;
}

/** The files the bundle is made from, relative to the repository's root. */
function sources() {
  const files = ["web/index.html", "web/style.css", "web/package-lock.json"];
  for (const name of readdirSync(join(here, "src"))) files.push(`web/src/${name}`);
  files.push(
    "clients/typescript/src/index.ts", "clients/typescript/package-lock.json", "clients/typescript/buf.gen.yaml",
    ...protos("proto"), ...protos("clients/typescript/proto"),
  );
  return files.sort();
}

export function sourceHash() {
  const h = createHash("sha256");
  for (const name of sources()) {
    h.update(name + "\0");
    h.update(readFileSync(join(root, name)));
    h.update("\0");
  }
  return h.digest("hex");
}

const bin = join(client, "node_modules", ".bin");
if (!existsSync(join(bin, "buf"))) {
  console.error("the page bundles the TypeScript client: run `npm ci` in clients/typescript (and here) first");
  process.exit(1);
}
// src/gen from proto/, as the client's `npm run generate` does (buf finds protoc-gen-es on PATH)
const path = `${bin}${process.platform === "win32" ? ";" : ":"}${process.env.PATH ?? ""}`;
execFileSync(join(bin, "buf"), ["generate"], { cwd: client, stdio: "inherit", env: { ...process.env, PATH: path } });

const banner = `/* hortus page: built from web/ by web/build.mjs (sources sha256 ${sourceHash()}); do not edit */`;
const result = await esbuild.build({
  entryPoints: [join(here, "src", "main.ts")],
  bundle: true,
  absWorkingDir: join(here, ".."), // the path comments in the bundle do not depend on the cwd
  format: "iife",
  target: "es2020",
  minify: true, // the client's runtime is most of the bundle: about 150 KB minified, 450 KB not
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
