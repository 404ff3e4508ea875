/**
 * Cold start: `import "tablekit"` (the built package, by its own name) against
 * `import "@azure/data-tables"`, each in fresh Node processes, alternating, median of 7 (API.md: at most
 * 1.3× the SDK's). Reported as wall time and as the process's CPU time, which a loaded machine disturbs less.
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { median } from "./measure.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");

/** One fresh process importing `specifier`: milliseconds of wall time and of CPU time for the import alone. */
async function coldImport(specifier: string): Promise<{ wall: number; cpu: number }> {
  const script = `const c = process.cpuUsage(); const t = performance.now(); await import(${JSON.stringify(specifier)});
const u = process.cpuUsage(c); console.log(JSON.stringify({ wall: performance.now() - t, cpu: (u.user + u.system) / 1000 }));`;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: root });
  return JSON.parse(stdout) as { wall: number; cpu: number };
}

export async function coldStart(
  record: (
    name: string,
    ours: number,
    baseline: number,
    unit: (v: number) => string,
    target: number | undefined,
  ) => void,
  quick: boolean,
): Promise<void> {
  console.log('\n[cold-start] import "tablekit" vs import "@azure/data-tables", fresh processes');
  if (!existsSync(join(root, "dist", "esm", "index.js"))) {
    console.log("  building the package first (npm run build)");
    execFileSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, stdio: "inherit" });
  }
  const runs = quick ? 5 : 7;
  const ours: Array<{ wall: number; cpu: number }> = [];
  const sdk: Array<{ wall: number; cpu: number }> = [];
  // Alternating which goes first, so the machine's drift hits both alike.
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      ours.push(await coldImport("tablekit"));
      sdk.push(await coldImport("@azure/data-tables"));
    } else {
      sdk.push(await coldImport("@azure/data-tables"));
      ours.push(await coldImport("tablekit"));
    }
  }
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  const wall = (samples: typeof ours) => median(samples.map((s) => s.wall));
  const cpu = (samples: typeof ours) => median(samples.map((s) => s.cpu));
  record(`cold import, wall (median of ${runs})`, wall(ours), wall(sdk), ms, 1.3);
  record(`cold import, CPU (median of ${runs})`, cpu(ours), cpu(sdk), ms, 1.3);
}
