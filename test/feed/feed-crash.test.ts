/**
 * The crash sweep: a composite change-fed write (a unique index in another table, whose intent is
 * logged first; a same-partition index; a summary) crashed after each of its requests, then repaired
 * by a fresh context. The feed then holds exactly the committed writes: the entity's versions run
 * 1..n with no gap, and its last change is what the entity now is (a repair's roll-forward is a
 * committed write too, with its own change).
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext } from "../../src/index.js";
import { CrashAfterStore } from "../compose/crash-after-store.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";

function declareAccount() {
  @Entity({
    table: "FeedAccounts",
    partitionKey: "{team}",
    rowKey: "acct_{id}",
    changeFeed: true,
    indexes: {
      byEmail: { table: "FeedAccountEmails", partitionKey: "{email}", rowKey: "email" },
      byPlan: { rowKey: "plan_{plan}_{id}", unique: false },
    },
    summaries: { perTeam: { rowKey: "summary", count: "accounts", sum: { seats: "seats" } } },
  })
  class Account {
    @Column({ type: "String" }) team!: string;
    @Column({ type: "String" }) id!: string;
    @Column({ type: "String" }) email!: string;
    @Column({ type: "String" }) plan!: string;
    @Column({ type: "Int32" }) seats!: number;
  }
  return Account;
}

type AccountClass = ReturnType<typeof declareAccount>;

function account(Account: AccountClass, version: number) {
  return Object.assign(new Account(), {
    team: "red",
    id: "a1",
    email: `v${version}@example.com`,
    plan: `p${version}`,
    seats: version * 10,
  });
}

/** A world with the account at version 1, its store crashable. */
async function world(kind: (typeof storeKinds)[number]) {
  const store = new CrashAfterStore(kind.create());
  const prefix = uniquePrefix("fk");
  const Account = declareAccount();
  const db = new TableContext({ store, tablePrefix: prefix });
  await db.ensureTables(Account);
  await db.repository(Account).insert(account(Account, 1));
  return { store, prefix, Account, db };
}

describe.each(storeKinds.map((k) => [k.name, k] as const))("change feed crash sweep on %s", (_name, kind) => {
  it("after a crash at every request and a repair, the feed holds exactly the committed writes", async () => {
    const probe = await world(kind);
    probe.store.disarm();
    await probe.db.repository(probe.Account).upsert(account(probe.Account, 2));
    const requests = probe.store.requests;
    expect(requests).toBeGreaterThan(2);

    const counts = new Set<number>();
    for (let k = 0; k < requests; k++) {
      const { store, prefix, Account, db } = await world(kind);
      store.arm(k);
      await db
        .repository(Account)
        .upsert(account(Account, 2))
        .catch(() => undefined);
      store.disarm();
      const fresh = new TableContext({ store, tablePrefix: prefix });
      await fresh.repair({ minIntentAgeMs: 0, entities: [Account] });
      const stored = await fresh.repository(Account).get({ team: "red", id: "a1" });
      const { changes } = await fresh.changes(Account).read();
      expect(
        changes.map((c) => c.version),
        `crash after ${k} of ${requests}`,
      ).toEqual(changes.map((_, i) => i + 1));
      expect(changes[0]?.entity?.seats, `crash after ${k}: the insert`).toBe(10);
      expect(changes.at(-1)?.entity?.seats, `crash after ${k}: the last change is the entity`).toBe(
        stored?.seats,
      );
      expect(await fresh.verifyIndexes(Account)).toEqual({ missing: [], stale: [], orphans: [] });
      counts.add(changes.length);
    }
    // Some crash points lost the write (the insert alone), others committed it (or repair rolled it forward).
    expect(counts.has(1), `changes per crash point: ${[...counts]}`).toBe(true);
    expect(
      [...counts].some((n) => n >= 2),
      `changes per crash point: ${[...counts]}`,
    ).toBe(true);
  });
});
