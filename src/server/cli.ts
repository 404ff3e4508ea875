#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { MemoryStore } from "../store/memory/memory-store.js";
import { startTableServer } from "./table-server.js";

const HELP = `Usage: tablekit serve [options]

Serves tablekit's reference store over the Azure Table REST protocol (an emulator).

Options:
  --host HOST      interface to listen on (default 127.0.0.1)
  --port PORT      port (default 10002; 0 picks a free one)
  --file PATH      persist to this JSON-lines file (loaded on start, appended per request)
  --account NAME   account name (default devstoreaccount1)
  --key BASE64     account key (default the emulator's well-known key)
  --tls-cert PATH  serve HTTPS with this PEM certificate (needs --tls-key)
  --tls-key PATH   the PEM private key of --tls-cert
  --oauth basic    also accept OAuth bearer tokens (Microsoft Entra ID); needs --tls-cert/--tls-key.
                   "basic" checks lifetime, issuer and audience but NOT the signature: local testing only
  --table-delete-delay-ms N
                   for N ms after a table is deleted, creating the same name answers
                   409 TableBeingDeleted, as Azure does (about 40 s there); default 0
  --explorer       serve the explorer web page at / (default when HOST is a loopback address)
  --no-explorer    do not serve the explorer page
  --help           print this help

The connection string is printed on a line of its own. SIGINT or SIGTERM stops the server (exit code 0).`;

/** Runs the `tablekit` command line; resolves with the exit code once the server is up (or failed). */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "--help" || command === "-h" || command === undefined) {
    process.stdout.write(`${HELP}\n`);
    return command === undefined ? 1 : 0;
  }
  if (command !== "serve") {
    process.stderr.write(`tablekit: unknown command '${command}'\n${HELP}\n`);
    return 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      host: { type: "string" },
      port: { type: "string" },
      file: { type: "string" },
      account: { type: "string" },
      key: { type: "string" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      oauth: { type: "string" },
      "table-delete-delay-ms": { type: "string" },
      explorer: { type: "boolean" },
      "no-explorer": { type: "boolean" },
      help: { type: "boolean" },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const port = values.port === undefined ? undefined : Number(values.port);
  const certPath = values["tls-cert"];
  const keyPath = values["tls-key"];
  if ((certPath === undefined) !== (keyPath === undefined)) {
    process.stderr.write("tablekit: --tls-cert and --tls-key go together\n");
    return 2;
  }
  const oauth = values.oauth;
  if (oauth !== undefined && oauth !== "basic") {
    process.stderr.write(`tablekit: --oauth takes "basic", got '${oauth}'\n`);
    return 2;
  }
  if (oauth !== undefined && certPath === undefined) {
    process.stderr.write(
      "tablekit: --oauth needs --tls-cert and --tls-key (bearer tokens go over HTTPS only)\n",
    );
    return 2;
  }
  if (values.explorer === true && values["no-explorer"] === true) {
    process.stderr.write("tablekit: --explorer and --no-explorer contradict each other\n");
    return 2;
  }
  const explorer = values.explorer === true ? true : values["no-explorer"] === true ? false : undefined;
  const tls =
    certPath === undefined || keyPath === undefined
      ? undefined
      : { cert: readFileSync(certPath), key: readFileSync(keyPath) };
  const delayText = values["table-delete-delay-ms"];
  const tableDeleteDelayMs = delayText === undefined ? undefined : Number(delayText);
  if (delayText !== undefined && !(/^\d+$/.test(delayText) && Number.isSafeInteger(tableDeleteDelayMs))) {
    process.stderr.write(
      `tablekit: --table-delete-delay-ms takes a whole number of milliseconds, got '${delayText}'\n`,
    );
    return 2;
  }
  const store = new MemoryStore({ file: values.file, tableDeleteDelayMs });
  const server = await startTableServer({
    host: values.host,
    port,
    store,
    account: values.account,
    key: values.key,
    tls,
    oauth,
    explorer,
  });
  const stop = () => {
    // Every write is journaled before it is answered, so stopping needs no flush.
    server.close().then(
      () => process.exit(0),
      () => process.exit(0),
    );
  };
  // Before the ready line: a reader may signal as soon as it sees it.
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  // One write, the connection string last: a reader that waits for it has seen every line.
  const explorerLine =
    server.explorerUrl === undefined ? "" : `tablekit serve: explorer at ${server.explorerUrl}\n`;
  process.stdout.write(
    `tablekit serve: listening on ${server.url}\n${explorerLine}${server.connectionString}\n`,
  );
  return -1;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`tablekit: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
