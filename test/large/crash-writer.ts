/**
 * The large-value crash test's victim: writes of entities with large columns in an endless loop on a
 * fixed set of keys, until the parent kills it (SIGKILL). Usage:
 *
 *   node --import tsx test/large/crash-writer.ts <connection string | memory file> <seed> <table prefix> <stop at>
 *
 * Progress lines (written synchronously, in order): `begin <op> <key> <version>`, `begin delete <key>`,
 * `request <method>` before every table or blob request, `committed <key> <version>`, `deleted <key>`.
 * After line <stop at> it freezes (event loop blocked) until the kill, so the kill lands exactly there.
 */
import { TableContext } from "../../src/repository/facade/table-context.js";
import type { BlobStore, TableStore } from "../../src/store/table-store.js";
import { childArguments, freezeAtLine, openChildStore, say } from "../support/child-lines.js";
import { seededRandom } from "../support/seeded-random.js";
import { CRASH_DOC_KEYS, CrashDoc, crashDoc } from "./crash-models.js";

/** Announces every request (table and blob) before it is sent. */
function traced(store: TableStore): TableStore {
  const announce = <T extends object>(target: T, kind: string): T =>
    new Proxy(target, {
      get(inner, property, receiver) {
        if (property === "blobs" && kind === "table") {
          const blobs = Reflect.get(inner, property, receiver) as BlobStore | undefined;
          return blobs === undefined ? undefined : announce(blobs, "blob");
        }
        const value = Reflect.get(inner, property, receiver);
        if (typeof value !== "function" || property === "constructor") return value;
        return (...args: unknown[]) => {
          say(`request ${kind}.${String(property)}`);
          return (value as (...a: unknown[]) => unknown).apply(inner, args);
        };
      },
    });
  return announce(store, "table");
}

async function main(): Promise<void> {
  const [target, seedText, prefix, stopText] = childArguments("crash-writer.ts", [
    "connection string | memory file",
    "seed",
    "table prefix",
    "stop at",
  ]) as [string, string, string, string];
  freezeAtLine(Number(stopText));
  const store = await openChildStore(target);
  const db = new TableContext({ store: traced(store), tablePrefix: prefix });
  const docs = db.repository(CrashDoc);
  const next = seededRandom(Number(seedText));
  // Distinct per run (the parent passes seed * 100 + run), and within Int32.
  let version = (Number(seedText) % 100_000) * 1000;
  for (;;) {
    const [folder, name] = CRASH_DOC_KEYS[Math.floor(next() * CRASH_DOC_KEYS.length)] as readonly [
      string,
      string,
    ];
    const key = `${folder}/${name}`;
    const current = await docs.get({ folder, name });
    const roll = next();
    version += 1;
    const wanted = crashDoc(folder, name, version);
    if (current && roll < 0.2) {
      say(`begin delete ${key}`);
      await docs.delete(current);
      say(`deleted ${key}`);
    } else if (roll < 0.5) {
      say(`begin upsert ${key} ${version}`);
      await docs.upsert(wanted);
      say(`committed ${key} ${version}`);
    } else if (!current) {
      say(`begin insert ${key} ${version}`);
      await docs.insert(wanted);
      say(`committed ${key} ${version}`);
    } else {
      say(`begin update ${key} ${version}`);
      await docs.update(Object.assign(current, { content: undefined }, wanted));
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
