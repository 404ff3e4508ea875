/**
 * The eventual SIGKILL test's victim: one archive move (`MOVE` plus a departure record with a
 * same-partition summary) through `db.eventually`, on entities the parent prepared. Usage:
 *
 *   node --import tsx test/eventual/crash-mover.ts <connection string | memory file> <table prefix> <id> <stop at>
 *
 * Once its modules are loaded it waits for a line on stdin (the parent's go: it starts the next child
 * while the current one runs). Once the move is planned (its reads done), every request is announced before it is sent, as
 * `request <n> <method> <table>`, and `resolved` follows when the move resolves. With <stop at> N > 0
 * the child freezes (event loop blocked) right after line N, so the parent's SIGKILL lands exactly
 * before request N is sent (or, for line `resolved`, after the move), whatever the machine's load.
 * With 0 it runs the move to the end and exits: the parent learns the protocol's requests.
 */
import { once } from "node:events";
import { createInterface } from "node:readline";
// Modules, not the package index: the memory runs start without loading the Azure SDK.
import { TableContext } from "../../src/repository/facade/table-context.js";
import type { TableStore } from "../../src/store/table-store.js";
import { announcing, childArguments, freezeAtLine, openChildStore, say } from "../support/child-lines.js";
import { Departure, departure } from "./models.js";
import { MOVE, movedEmployee } from "./move.js";

/** Announces every request once `counting` is on, before it is sent. */
function traced(store: TableStore, counting: () => boolean): TableStore {
  let requests = 0;
  return announcing(store, (method, table) => {
    if (counting()) say(`request ${++requests} ${method} ${table}`);
  });
}

async function main(): Promise<void> {
  const [target, prefix, idText, stopText] = childArguments("crash-mover.ts", [
    "connection string | memory file",
    "table prefix",
    "id",
    "stop at",
  ]) as [string, string, string, string];
  freezeAtLine(Number(stopText));
  const id = Number(idText);
  // The store is opened after the go: a MemoryStore file is read when it is opened.
  await once(createInterface({ input: process.stdin }), "line");
  const store = await openChildStore(target);
  let counting = false;
  const db = new TableContext({ store: traced(store, () => counting), tablePrefix: prefix });
  const move = await MOVE.plan(db, id, (tx) => tx.insert(departure(movedEmployee(id))));
  // Known to the context like any class it writes (the summary's rows are the repository's work).
  db.repository(Departure);
  counting = true;
  await move();
  say("resolved");
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `crash-mover failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
