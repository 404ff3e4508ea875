/**
 * The summaries crash test's victim: single writes (insert, update, upsert, patch, delete) and bulk
 * writes (insert, upsert, delete, one batch at a time) on an entity with a same-partition summary, in
 * an endless seeded loop, until the parent kills it (SIGKILL). Usage:
 *
 *   node test/writes/summaries-crash-writer.ts <connection string | memory file> <table prefix> <seed> <stop at>
 *
 * Once its modules are loaded it waits for a line on stdin (the parent's go). Every request is
 * announced before it is sent (`request <n> <method> <table>`); after line <stop at> the writer
 * freezes (event loop blocked) until the kill, so the kill lands exactly before that request.
 */
import { once } from "node:events";
import { createInterface } from "node:readline";
import { EntityAlreadyExistsError, EntityNotFoundError } from "../../src/errors.js";
import { TableContext } from "../../src/repository/facade/table-context.js";
import type { TableStore } from "../../src/store/table-store.js";
import { announcing, childArguments, freezeAtLine, openChildStore, say } from "../support/child-lines.js";
import { seededRandom } from "../support/seeded-random.js";
import { KILL_TEAMS, KillMember, killMember } from "./summaries-crash-models.js";

/** Announces every request before it is sent. */
function traced(store: TableStore): TableStore {
  let requests = 0;
  return announcing(store, (method, table) => say(`request ${++requests} ${method} ${table}`));
}

/** Ids per team: few, so writes often meet existing rows. */
const IDS = 24;

async function main(): Promise<void> {
  const [target, prefix, seedText, stopText] = childArguments("summaries-crash-writer.ts", [
    "connection string | memory file",
    "table prefix",
    "seed",
    "stop at",
  ]) as [string, string, string, string];
  freezeAtLine(Number(stopText));
  const seed = Number(seedText);
  await once(createInterface({ input: process.stdin }), "line");
  const store = await openChildStore(target);
  const members = new TableContext({ store: traced(store), tablePrefix: prefix }).repository(KillMember);
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  let version = (seed % 100_000) * 1000;
  for (;;) {
    version += 1;
    const roll = next();
    const team = pick(KILL_TEAMS);
    const id = Math.floor(next() * IDS);
    try {
      if (roll < 0.15) await members.insert(killMember(team, id, version));
      else if (roll < 0.3) await members.upsert(killMember(team, id, version));
      else if (roll < 0.45) {
        const current = await members.get({ team, id });
        if (current)
          await members.update(Object.assign(current, { bonus: undefined }, killMember(team, id, version)));
      } else if (roll < 0.55) await members.patch({ team, id }, { salary: version % 1000 });
      else if (roll < 0.65) await members.delete({ team, id });
      else {
        // A bulk write over both teams: one batch (with its summary row) per team, one batch at a time.
        const ids = Array.from({ length: 2 + Math.floor(next() * 10) }, () => Math.floor(next() * IDS));
        const items = ids.map((i, n) => killMember(KILL_TEAMS[n % 2] as string, i, version));
        const unique = [...new Map(items.map((m) => [`${m.team}/${m.id}`, m])).values()];
        const bulk = next();
        if (bulk < 0.4) await members.bulkUpsert(unique, { concurrency: 1 });
        else if (bulk < 0.7)
          await members.bulkDelete(
            unique.map(({ team: t, id: i }) => ({ team: t, id: i })),
            { concurrency: 1 },
          );
        else await members.bulkInsert(unique, { concurrency: 1 });
      }
    } catch (error) {
      // A conflict with the data the loop met is an ordinary answer; anything else ends the writer.
      if (!(error instanceof EntityAlreadyExistsError || error instanceof EntityNotFoundError)) throw error;
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `summaries-crash-writer failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
