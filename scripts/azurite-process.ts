/**
 * The one Azurite launcher: used by the vitest global setup (test/support/azurite-setup.ts), the
 * benchmarks (bench/run.ts) and anything else under scripts/. Starts `azurite-table` in memory on a
 * free loopback port and stops it (and anything it spawned) again.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The well-known development account of Azurite (public, documented by Microsoft; not a secret). */
export const AZURITE_ACCOUNT = "devstoreaccount1";
/** The development account's key (public, documented by Microsoft; not a secret). */
export const AZURITE_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

const READY_LINE = "Azurite Table service successfully started";
const DEFAULT_START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** A running Azurite Table service. */
export interface AzuriteProcess {
  port: number;
  connectionString: string;
  stop(): Promise<void>;
}

/** Builds the connection string of a local Azurite Table endpoint. */
export function azuriteConnectionStringFor(host: string, port: number): string {
  return (
    `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};` +
    `TableEndpoint=http://${host}:${port}/${AZURITE_ACCOUNT};`
  );
}

/** A loopback port that was free a moment ago (nothing listens on it when this resolves). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts `azurite-table` from node_modules, in memory, on a free port, and waits until it is ready. */
export async function startAzurite(
  options: { root?: string; timeoutMs?: number } = {},
): Promise<AzuriteProcess> {
  const root = options.root ?? REPO_ROOT;
  // The port probe and Azurite's bind can race with another process; retry on a fresh port.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    // Azurite prints ":0" when given port 0, so pick a free port first.
    const port = await freePort();
    try {
      return await spawnAzurite(root, port, options.timeoutMs ?? DEFAULT_START_TIMEOUT_MS);
    } catch (error) {
      lastError = error;
      if (!String((error as Error).message).includes("EADDRINUSE")) throw error;
    }
  }
  throw lastError;
}

function spawnAzurite(root: string, port: number, timeoutMs: number): Promise<AzuriteProcess> {
  // Run the bin's script with this Node directly: one process, no shell wrapper to outlive.
  const script = realpathSync(join(root, "node_modules", ".bin", "azurite-table"));
  // Azurite closes idle sockets after 5 s and announces it (Keep-Alive: timeout=5); Node >= 20's agent
  // drops a pooled socket 1 s before that, so a reused socket is never reset under a request. (The
  // --tableKeepAliveTimeout flag is ignored by Azurite 3.35: TableEnvironment reads a misspelled name.)
  const args = [
    script,
    "--inMemoryPersistence",
    "--disableTelemetry",
    "--skipApiVersionCheck",
    "--silent",
    "--tableHost",
    "127.0.0.1",
    "--tablePort",
    String(port),
  ];
  // detached: own process group, so stopping signals Azurite and anything it spawned.
  const child = spawn(process.execPath, args, {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stopOnExit = () => killGroup(child, "SIGKILL");
  process.once("exit", stopOnExit);

  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-8_000);
  });

  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    process.removeListener("exit", stopOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    killGroup(child, "SIGTERM");
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  return new Promise<AzuriteProcess>((resolve, reject) => {
    const fail = async (reason: string) => {
      cleanup();
      await stop();
      reject(
        new Error(
          `Azurite did not start on 127.0.0.1:${port}: ${reason}\n` +
            `command: ${process.execPath} ${args.join(" ")}\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        ),
      );
    };
    // A start-up guard, not a test limit: an emulator that never starts must fail the run, not hang it.
    const timer = setTimeout(() => void fail(`no "${READY_LINE}" line within ${timeoutMs} ms`), timeoutMs);
    const onData = (chunk: string) => {
      stdout = (stdout + chunk).slice(-8_000);
      if (stdout.includes(READY_LINE)) {
        cleanup();
        // Keep draining output so a full pipe never blocks the emulator.
        child.stdout?.resume();
        resolve({ port, connectionString: azuriteConnectionStringFor("127.0.0.1", port), stop });
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      void fail(`process exited early (code ${code}, signal ${signal})`);
    const onError = (error: Error) => void fail(`spawn failed: ${error.message}`);
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.removeListener("data", onData);
      child.removeListener("exit", onExit);
      child.removeListener("error", onError);
    };
    child.stdout?.on("data", onData);
    child.once("exit", onExit);
    child.once("error", onError);
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}
