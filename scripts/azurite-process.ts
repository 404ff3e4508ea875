/**
 * The one Azurite launcher: used by the vitest global setup (test/support/azurite-setup.ts), the
 * benchmarks (bench/run.ts) and anything else under scripts/. Starts `azurite-table` and `azurite-blob`
 * (large entity values live in Blob Storage) in memory on free loopback ports and stops them (and
 * anything they spawned) again.
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

/** The two services tablekit uses, each a separate Azurite process, and the line each prints when ready. */
const SERVICES = {
  table: {
    bin: "azurite-table",
    hostFlag: "--tableHost",
    portFlag: "--tablePort",
    ready: "Azurite Table service successfully started",
  },
  blob: {
    bin: "azurite-blob",
    hostFlag: "--blobHost",
    portFlag: "--blobPort",
    ready: "Azurite Blob service successfully listens",
  },
} as const;
type ServiceKind = keyof typeof SERVICES;
const DEFAULT_START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** A running Azurite Table service and Blob service. */
export interface AzuriteProcess {
  /** The Table service's port. */
  port: number;
  /** The Blob service's port. */
  blobPort: number;
  /** Names both endpoints (`TableEndpoint=…;BlobEndpoint=…`). */
  connectionString: string;
  stop(): Promise<void>;
}

/** One running Azurite service process. */
interface ServiceProcess {
  port: number;
  stop(): Promise<void>;
}

/** Builds the connection string of a local Azurite Table endpoint (and Blob endpoint, when its port is given). */
export function azuriteConnectionStringFor(host: string, port: number, blobPort?: number): string {
  return (
    `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};` +
    `TableEndpoint=http://${host}:${port}/${AZURITE_ACCOUNT};` +
    (blobPort === undefined ? "" : `BlobEndpoint=http://${host}:${blobPort}/${AZURITE_ACCOUNT};`)
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

/**
 * Starts `azurite-table` and `azurite-blob` from node_modules, in memory, each on a free port, and
 * waits until both are ready; if either fails to start, the other is stopped again.
 */
export async function startAzurite(
  options: { root?: string; timeoutMs?: number } = {},
): Promise<AzuriteProcess> {
  const root = options.root ?? REPO_ROOT;
  const timeoutMs = options.timeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const [table, blob] = await Promise.allSettled([
    startService(root, "table", timeoutMs),
    startService(root, "blob", timeoutMs),
  ]);
  if (table.status === "rejected" || blob.status === "rejected") {
    await Promise.all([table, blob].map((s) => (s.status === "fulfilled" ? s.value.stop() : undefined)));
    throw table.status === "rejected" ? table.reason : (blob as PromiseRejectedResult).reason;
  }
  return {
    port: table.value.port,
    blobPort: blob.value.port,
    connectionString: azuriteConnectionStringFor("127.0.0.1", table.value.port, blob.value.port),
    stop: async () => {
      await Promise.all([table.value.stop(), blob.value.stop()]);
    },
  };
}

async function startService(root: string, kind: ServiceKind, timeoutMs: number): Promise<ServiceProcess> {
  // The port probe and Azurite's bind can race with another process; retry on a fresh port.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    // Azurite prints ":0" when given port 0, so pick a free port first.
    const port = await freePort();
    try {
      return await spawnService(root, kind, port, timeoutMs);
    } catch (error) {
      lastError = error;
      if (!String((error as Error).message).includes("EADDRINUSE")) throw error;
    }
  }
  throw lastError;
}

function spawnService(
  root: string,
  kind: ServiceKind,
  port: number,
  timeoutMs: number,
): Promise<ServiceProcess> {
  const service = SERVICES[kind];
  const READY_LINE = service.ready;
  // Run the bin's script with this Node directly: one process, no shell wrapper to outlive.
  const script = realpathSync(join(root, "node_modules", ".bin", service.bin));
  // Azurite closes idle sockets after 5 s and announces it (Keep-Alive: timeout=5). Node's agent honours
  // that hint only when the agent has a timeout of its own; the Azure SDK's default agent has none, so
  // the test stores bring an agent that drops idle sockets first (test/support/azurite.ts). (The
  // --tableKeepAliveTimeout flag is ignored by Azurite 3.35: TableEnvironment reads a misspelled name.)
  const args = [
    script,
    "--inMemoryPersistence",
    "--disableTelemetry",
    "--skipApiVersionCheck",
    "--silent",
    service.hostFlag,
    "127.0.0.1",
    service.portFlag,
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

  return new Promise<ServiceProcess>((resolve, reject) => {
    const fail = async (reason: string) => {
      cleanup();
      await stop();
      reject(
        new Error(
          `Azurite ${kind} service did not start on 127.0.0.1:${port}: ${reason}\n` +
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
        resolve({ port, stop });
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
