import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The well-known development account of Azurite (public, documented; not a secret). */
export const AZURITE_ACCOUNT = "devstoreaccount1";
export const AZURITE_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/** A running Azurite table service. */
export interface AzuriteProcess {
  connectionString: string;
  port: number;
  stop(): Promise<void>;
}

/** Asks the OS for a free loopback port (Azurite prints ":0" when given port 0, so pick one first). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  server.close();
  await once(server, "close");
  if (address === null || typeof address === "string") throw new Error("could not obtain a free port");
  return address.port;
}

/** Starts `azurite-table` from node_modules, in memory, on a free port, and waits until it is ready. */
export async function startAzurite(options: { timeoutMs?: number } = {}): Promise<AzuriteProcess> {
  const port = await freePort();
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const bin = join(root, "node_modules", "azurite", "dist", "src", "table", "main.js");
  const child: ChildProcess = spawn(
    process.execPath,
    [
      bin,
      "--inMemoryPersistence",
      "--disableTelemetry",
      "--skipApiVersionCheck",
      "--tableHost",
      "127.0.0.1",
      "--tablePort",
      String(port),
    ],
    { stdio: ["ignore", "pipe", "pipe"], cwd: root },
  );
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`Azurite did not start within ${options.timeoutMs ?? 20_000} ms:\n${output}`));
    }, options.timeoutMs ?? 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("successfully started")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`Azurite exited with code ${code} before it was ready:\n${output}`));
    });
  });
  // Request logs are not needed once ready; drain the pipes so Azurite never blocks on them.
  child.stdout?.removeAllListeners("data");
  child.stdout?.resume();
  child.stderr?.resume();
  const connectionString =
    `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};` +
    `TableEndpoint=http://127.0.0.1:${port}/${AZURITE_ACCOUNT};`;
  return {
    connectionString,
    port,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await once(child, "exit");
      clearTimeout(timer);
    },
  };
}
