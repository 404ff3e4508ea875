/**
 * Vitest globalSetup: starts one in-memory Azurite Table service for the whole run (or uses
 * `TABLEKIT_TEST_CONNECTION_STRING`) and hands its connection string to tests via `provide`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { freePort } from "./free-port.js";

const READY_LINE = "Azurite Table service successfully started";
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
/** The emulator's well-known development account key (public, documented by Microsoft). */
const DEV_ACCOUNT_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/** Builds the connection string of a local Azurite Table endpoint. */
export function azuriteConnectionStringFor(host: string, port: number): string {
  return (
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
    `AccountKey=${DEV_ACCOUNT_KEY};TableEndpoint=http://${host}:${port}/devstoreaccount1;`
  );
}

/** Starts Azurite (unless a connection string is given) and returns the teardown. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.TABLEKIT_TEST_CONNECTION_STRING;
  if (external) {
    project.provide("azuriteConnectionString", external);
    return async () => {};
  }
  const azurite = await startAzurite(project.config.root);
  project.provide("azuriteConnectionString", azuriteConnectionStringFor("127.0.0.1", azurite.port));
  return () => azurite.stop();
}

/** A running Azurite Table service started by {@link startAzurite}. */
export interface RunningAzurite {
  port: number;
  stop(): Promise<void>;
}

/** Spawns `azurite-table` in memory on a free loopback port and waits until it is ready. */
export async function startAzurite(root: string): Promise<RunningAzurite> {
  // The port probe and Azurite's bind can race with another process; retry on a fresh port.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    // Azurite prints ":0" when given port 0, so pick a free port first.
    const port = await freePort();
    try {
      return await spawnAzurite(root, port);
    } catch (error) {
      lastError = error;
      if (!String((error as Error).message).includes("EADDRINUSE")) throw error;
    }
  }
  throw lastError;
}

function spawnAzurite(root: string, port: number): Promise<RunningAzurite> {
  // Run the bin's script with this Node directly: one process, no shell wrapper to outlive.
  const script = realpathSync(join(root, "node_modules", ".bin", "azurite-table"));
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
  // detached: own process group, so teardown can signal Azurite and anything it spawned.
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

  return new Promise<RunningAzurite>((resolve, reject) => {
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
    const timer = setTimeout(
      () => void fail(`no "${READY_LINE}" line within ${START_TIMEOUT_MS} ms`),
      START_TIMEOUT_MS,
    );
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
