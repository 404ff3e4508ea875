import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { startTableServer, type TableServerOptions } from "../server/table-server.js";
import { MemoryStore } from "../store/memory/memory-store.js";
import { integerOption, UsageError } from "./options.js";

/** The options of `tablekit serve`, as commander parses them. */
interface ServeFlags {
  host?: string;
  port?: number;
  file?: string;
  account?: string;
  key?: string;
  tlsCert?: string;
  tlsKey?: string;
  oauth?: string;
  tableDeleteDelayMs?: number;
  skipApiVersionCheck?: boolean;
  /** `true` for --explorer, `false` for --no-explorer, absent for the default (on for a loopback host). */
  explorer?: boolean;
}

/** Adds `tablekit serve` to the program. */
export function addServeCommand(program: Command): void {
  program
    .command("serve")
    .description("Serves tablekit's reference store over the Azure Table REST protocol (an emulator).")
    .option("--host <host>", "interface to listen on (default 127.0.0.1)")
    .option("--port <port>", "port (default 10002; 0 picks a free one)", integerOption("--port", 0))
    .option("--file <path>", "persist to this JSON-lines file (loaded on start, appended per request)")
    .option("--account <name>", "account name (default devstoreaccount1)")
    .option("--key <base64>", "account key (default the emulator's well-known key)")
    .option("--tls-cert <path>", "serve HTTPS with this PEM certificate (needs --tls-key)")
    .option("--tls-key <path>", "the PEM private key of --tls-cert")
    .option(
      "--oauth <mode>",
      'also accept OAuth bearer tokens (Microsoft Entra ID); needs --tls-cert/--tls-key. "basic" checks\n' +
        "lifetime, issuer and audience but NOT the signature: local testing only",
    )
    .option(
      "--table-delete-delay-ms <ms>",
      "how long a deleted table's name stays unavailable (Azure: about 40 s)",
      integerOption("--table-delete-delay-ms", 0),
    )
    .option(
      "--skip-api-version-check",
      "accept any x-ms-version of the form YYYY-MM-DD (for SDKs newer than serve's list; as Azurite's\n" +
        "--skipApiVersionCheck). Default: a version Azure does not know is 400 InvalidHeaderValue",
    )
    .option("--explorer", "serve the explorer web page at / (default when HOST is a loopback address)")
    .option("--no-explorer", "do not serve the explorer page")
    .addHelpText(
      "after",
      "\nThe connection string is printed on a line of its own. SIGINT or SIGTERM stops the server (exit code 0).",
    )
    .action((flags: ServeFlags) => serve(flags));
}

async function serve(flags: ServeFlags): Promise<void> {
  const certPath = flags.tlsCert;
  const keyPath = flags.tlsKey;
  if ((certPath === undefined) !== (keyPath === undefined)) {
    throw new UsageError("--tls-cert and --tls-key go together");
  }
  const oauth = flags.oauth;
  if (oauth !== undefined && oauth !== "basic") {
    throw new UsageError(`--oauth takes "basic", got '${oauth}'`);
  }
  if (oauth !== undefined && certPath === undefined) {
    throw new UsageError("--oauth needs --tls-cert and --tls-key (bearer tokens go over HTTPS only)");
  }
  const tls =
    certPath === undefined || keyPath === undefined
      ? undefined
      : { cert: readFileSync(certPath), key: readFileSync(keyPath) };
  const store = new MemoryStore({ file: flags.file, tableDeleteDelayMs: flags.tableDeleteDelayMs });
  const options: TableServerOptions = {
    host: flags.host,
    port: flags.port,
    store,
    account: flags.account,
    key: flags.key,
    tls,
    oauth: oauth as TableServerOptions["oauth"],
    explorer: flags.explorer,
    skipApiVersionCheck: flags.skipApiVersionCheck,
  };
  const server = await startTableServer(options);
  const cs = server.connectionString;
  const insecure = server.url.startsWith("http:");
  const lines = [
    `tablekit serve: listening on ${server.url}`,
    ...(server.explorerUrl === undefined ? [] : [`tablekit serve: explorer at ${server.explorerUrl}`]),
    cs,
    "",
    "Connect with @azure/data-tables:",
    `  TableClient.fromConnectionString(cs, "MyTable"${insecure ? ", { allowInsecureConnection: true }" : ""})`,
  ];
  if (insecure && server.port === 10002 && (flags.account ?? "devstoreaccount1") === "devstoreaccount1") {
    lines.push('  (or the connection string "UseDevelopmentStorage=true", as this is the default port)');
  }
  lines.push(
    "Connect with tablekit:",
    "  new TableContext({ store: AzureStore.fromConnectionString(cs) })",
    // A local install puts `tablekit` in node_modules/.bin, not on the PATH: npx finds it.
    `  TABLEKIT_CONNECTION_STRING="${cs}" npx tablekit export --table MyTable`,
    "",
  );
  // The handlers come first: a parent that reads the connection string may signal at once.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.stdout.write(`tablekit serve: stopping (${signal})\n`);
      // Every write is journaled before it is answered, so stopping needs no flush.
      server.close().then(
        () => resolve(),
        () => resolve(),
      );
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  process.stdout.write(lines.join("\n"));
  await stopped;
  process.stdout.write("tablekit serve: stopped\n");
}
