/**
 * The crash test's victim: indexed writes in an endless loop on a fixed set of keys, until the
 * parent kills it (SIGKILL). Usage:
 *
 *   node --import tsx test/indexes/crash-writer.ts <connection string | memory file> <seed> <table prefix> <stop at>
 *
 * Progress goes to stdout, one line per step, written synchronously (so every line printed before
 * the kill reaches the parent, in order):
 *   begin <insert|update|upsert> <key> <version>   a write is about to start
 *   begin delete <key>
 *   request <method> <table>                       a store request is about to be sent
 *   committed <key> <version>                      the write returned
 *   deleted <key>
 * Keys are `<department>/<employeeId>`; an employee's values follow from its version (`rxEmployee`).
 * The request lines let the parent's kill land at any step of a write, not only between writes.
 * After printing line number <stop at>, the writer freezes (its event loop blocked, so nothing more is
 * sent or read) until the parent's SIGKILL: the kill lands at exactly that step, whatever the machine load.
 */
// Modules, not the package index: the memory runs start without loading the Azure SDK.
import { TableContext } from "../../src/repository/facade/table-context.js";
import type { TableStore } from "../../src/store/table-store.js";
import { announcing, childArguments, freezeAtLine, openChildStore, say } from "../support/child-lines.js";
import { seededRandom } from "../support/seeded-random.js";
import { CRASH_KEYS, firstVersion } from "./crash-protocol.js";
import { RxEmployee, rxEmployee } from "./models.js";

/** Announces every request before it is sent. */
function traced(store: TableStore): TableStore {
  return announcing(store, (method, table) => say(`request ${method} ${table}`));
}

async function main(): Promise<void> {
  const [target, seedText, prefix, stopText] = childArguments("crash-writer.ts", [
    "connection string | memory file",
    "seed",
    "table prefix",
    "stop at",
  ]) as [string, string, string, string];
  const seed = Number(seedText);
  freezeAtLine(Number(stopText));
  const store = await openChildStore(target);
  const db = new TableContext({ store: traced(store), tablePrefix: prefix });
  const employees = db.repository(RxEmployee);
  const next = seededRandom(seed);
  let version = firstVersion(seed);

  for (;;) {
    const [department, employeeId] = CRASH_KEYS[Math.floor(next() * CRASH_KEYS.length)]!;
    const key = `${department}/${employeeId}`;
    const current = await employees.get({ department, employeeId });
    const roll = next();
    version += 1;
    if (current && roll >= 0.8) {
      // A write keeping the remote copies' keys (same lastName and age): only their content changes.
      while ((version - current.version) % 30 !== 0) version += 1;
    }
    const wanted = rxEmployee(department, employeeId, version);
    if (current && roll < 0.25) {
      say(`begin delete ${key}`);
      await employees.delete(current);
      say(`deleted ${key}`);
    } else if (roll < 0.45) {
      // A blind upsert, inserting or replacing without having read.
      say(`begin upsert ${key} ${version}`);
      await employees.upsert(wanted);
      say(`committed ${key} ${version}`);
    } else if (!current) {
      say(`begin insert ${key} ${version}`);
      await employees.insert(wanted);
      say(`committed ${key} ${version}`);
    } else {
      say(`begin update ${key} ${version}`);
      current.badge = undefined;
      await employees.update(Object.assign(current, wanted));
      say(`committed ${key} ${version}`);
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `crash-writer failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
