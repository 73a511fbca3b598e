// Installs the newest published version of every harness package in
// package.json into the folder given (make harnesses-latest) and prints
// each package's version. A package that moved to a new name
// (lifeloop.successors: old name -> new name) is installed under its new
// name; when the new name's newest version cannot be installed or does
// not run here, this says so by name and version, and the folder keeps
// the old name's last release, named as such (not as the newest).
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
for (const n of plain) console.log(n, manifest(n).version);

let blocked = 0;
for (const old of names.filter((n) => successors[n])) {
  const next = successors[old];
  const newest = (npm(["view", next + "@latest", "version"]).stdout || "").trim() || "(unknown)";
  let why = "";
  const ri = install([next + "@latest"]);
  if (ri.status !== 0) {
    why = "cannot be installed here: " + firstError(ri.stderr);
  } else {
    const m = manifest(next);
    const bin = typeof m.bin === "string" ? m.bin : Object.values(m.bin || {})[0];
    const run = spawnSync(process.execPath, [path.join(dir, "node_modules", next, bin), "--version"], { encoding: "utf8", timeout: 30000 });
    if (run.status !== 0) {
      const engines = m.engines && m.engines.node ? "; it requires node " + m.engines.node + ", this is node " + process.version : "";
      why = "installs but does not run here (" + firstError(run.stderr || run.stdout || "") + ")" + engines;
    }
  }
  if (!why) {
    console.log(next, manifest(next).version, "(successor of " + old + ")");
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
