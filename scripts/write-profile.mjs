// `node scripts/write-profile.mjs [upsert|transaction] [ours|sdk|both] [rounds] [--cpu-prof]`: runs
// bench/write-profile.ts compiled as `npm run bench` compiles bench/run.ts (an esbuild bundle beside it,
// not committed), so closures pay no tsx `keepNames` cost. `--cpu-prof` writes a V8 CPU profile into
// bench/profiles/; `--top FILE.cpuprofile` prints the heaviest frames of one by self-time instead.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { bundleBench, root } from "./bench-bundle.mjs";

const args = process.argv.slice(2);

/** Self-time in µs per frame ("function file:line") of a V8 CPU profile. */
function selfTimes(path) {
  const profile = JSON.parse(readFileSync(path, "utf8"));
  const self = new Map();
  const interval = (profile.endTime - profile.startTime) / profile.samples.length;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const id of profile.samples) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    const file = url.replace(/^.*\/node_modules\//, "").replace(/^file:\/\/.*\/(src|bench)\//, "$1/");
    const name = `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + interval);
  }
  return self;
}

if (args[0] === "--diff") {
  // `--diff A B`: the frames whose self-time differs most between two profiles (A − B), idle left out.
  const a = selfTimes(args[1]);
  const b = selfTimes(args[2]);
  const busy = (m) => [...m].filter(([n]) => !n.startsWith("(idle)")).reduce((s, [, v]) => s + v, 0);
  console.log(`busy: ${(busy(a) / 1000).toFixed(1)} ms vs ${(busy(b) / 1000).toFixed(1)} ms`);
  const names = new Set([...a.keys(), ...b.keys()]);
  const rows = [...names]
    .map((n) => [n, (a.get(n) ?? 0) - (b.get(n) ?? 0)])
    .filter(([n]) => !n.startsWith("(idle)"));
  for (const [name, d] of rows.sort((x, y) => Math.abs(y[1]) - Math.abs(x[1])).slice(0, 40)) {
    console.log(`${(d / 1000).toFixed(1).padStart(8)} ms  ${name}`);
  }
  process.exit(0);
}

if (args[0] === "--top") {
  const self = selfTimes(args[1]);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const filter = args[2];
  for (const [name, us] of [...self]
    .sort((a, b) => b[1] - a[1])
    .filter(([n]) => !filter || n.includes(filter))
    .slice(0, 40)) {
    console.log(
      `${((100 * us) / total).toFixed(2).padStart(6)} %  ${(us / 1000).toFixed(1).padStart(8)} ms  ${name}`,
    );
  }
  process.exit(0);
}

const outfile = await bundleBench("write-profile", { sourcemap: "inline" });
const profiling = args.includes("--cpu-prof");
const node = profiling ? ["--cpu-prof", "--cpu-prof-dir", join(root, "bench", "profiles")] : [];
const run = spawnSync(process.execPath, [...node, outfile, ...args.filter((a) => a !== "--cpu-prof")], {
  stdio: "inherit",
});
process.exit(run.status ?? 1);
