/**
 * The plan a write renders (`explainWrite`) is the plan it runs: for a plain, an indexed + summarized,
 * a large and a remote-index entity, the requests a write sends, recorded in order through a store
 * wrapper (blob requests included), are the steps its plan listed just before it was sent.
 */
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  Column,
  ConcurrencyError,
  Entity,
  etagOf,
  localKeys,
  type Repository,
  TableContext,
  type WriteStep,
} from "../../src/index.js";
import { partRowKey } from "../../src/serialization/wide-rows.js";
import { blobStores, uniquePrefix } from "../fixtures/context.js";
import { declareWide, type WideRow } from "../fixtures/models.js";
import { RecordingStore } from "../support/recording-store.js";
import { testSeed } from "../support/seeded-random.js";
import { Order, order } from "./order-model.js";
import { expectSentAsExplained, expectSentAsPlanned, methodOf } from "./plan-compare.js";

@Entity({ table: "PlanPlain", partitionKey: "{group}", rowKey: "{id}" })
class Plain {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) n!: number;
}

@Entity({
  table: "PlanIndexed",
  partitionKey: "{group}",
  rowKey: "item_{id}",
  indexes: { byColor: { rowKey: "color_{color}_{id}" } },
  summaries: { perGroup: { rowKey: "summary", count: "items", sum: { n: "total" } } },
})
class Indexed {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) color!: string;
  @Column({ type: "Int32" }) n!: number;
}

@Entity({
  table: "PlanSummed",
  partitionKey: "{group}",
  rowKey: "item_{id}",
  summaries: { perGroup: { rowKey: "summary", count: "items", sum: { n: "total" } } },
})
class Summed {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) n!: number;
}

@Entity({ table: "PlanLarge", partitionKey: "{group}", rowKey: "{id}" })
class Large {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Binary", large: true }) body?: Uint8Array;
}

@Entity({
  table: "PlanRemote",
  partitionKey: "{group}",
  rowKey: "{id}",
  indexes: {
    byCode: { table: "PlanCodes", partitionKey: "c", rowKey: "{code}", unique: true },
    byTag: { partitionKey: "tag_{tag}", rowKey: "{group}_{id}", unique: false },
  },
})
class Remote {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) code!: string;
  @Column({ type: "String" }) tag!: string;
}

/** A wide entity of two rows (300 columns: a row holds at most 252 properties). */
const Wide = declareWide("PlanWide", 300);
type Wide = WideRow;

/** A wide entity with an index: its rows and its copy in one transaction. */
@Entity({
  table: "PlanWideIndexed",
  partitionKey: "{group}",
  rowKey: "item_{id}",
  wide: true,
  indexes: { byColor: { rowKey: "color_{color}_{id}" } },
})
class WideIndexed {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) color!: string;
}

function wide(id: string, columns: number): Wide {
  const w = Object.assign(new Wide(), { group: "g", id });
  for (let i = 0; i < columns; i++) w[`v${i}`] = i;
  return w;
}

type Kind = (typeof blobStores)[number][1];

async function setup(kind: Kind) {
  const store = new RecordingStore(kind.create());
  const db = new TableContext({ store, tablePrefix: uniquePrefix() });
  await db.ensureTables(Plain, Indexed, Summed, Large, Remote, Wide, WideIndexed);
  store.sent.length = 0;
  return { db, store };
}

/** Explains a write, sends it, and compares the plan's steps with the requests sent. */
async function sendsItsPlan(
  store: RecordingStore,
  explain: () => WriteStep[],
  write: () => Promise<unknown>,
) {
  const steps = explain();
  expect(store.sent, "explaining sends nothing").toEqual([]);
  await write();
  const sent = store.sent.splice(0);
  // Every write sends something: two empty lists would agree whatever the code did.
  expect(sent.length, JSON.stringify(steps)).toBeGreaterThan(0);
  const planned = steps.map((step) => ({ method: methodOf(step), table: step.table }));
  // The same requests to the same tables; reads that one round makes in parallel (a summary row
  // and the row before) may arrive in either order.
  expect(sent.map((c) => `${c.method} ${c.table}`).sort(), JSON.stringify(steps)).toEqual(
    planned.map((c) => `${c.method} ${c.table}`).sort(),
  );
  // And in order, once each run of reads is taken as one.
  const squash = (calls: Array<{ method: string; table: string }>) =>
    calls.map((c) => c.method).filter((m, i, all) => m !== "getEntity" || all[i - 1] !== "getEntity");
  expect(squash(sent)).toEqual(squash(planned));
  return steps;
}

/** Deletes the entity `g/1` as its plan (for what is stored) says, and checks it is gone. */
async function deletesAsPlanned(store: RecordingStore, repo: Repository<Wide> | Repository<WideIndexed>) {
  const key = { group: "g", id: "1" };
  const stored = await (repo as Repository<Wide>).get(key);
  store.sent.length = 0;
  await sendsItsPlan(
    store,
    () => (repo as Repository<Wide>).explainWrite("delete", key, { current: stored ? [stored] : [] }).steps,
    () => repo.delete(key),
  );
  expect(await repo.get(key)).toBeUndefined();
}

function explain<T extends object>(
  repo: Repository<T>,
  operation: Parameters<Repository<T>["explainWrite"]>[0],
  value: Partial<T>,
  current: Partial<T>[] = [],
) {
  return () => repo.explainWrite(operation, value, { current }).steps;
}

describe.each(blobStores)("the plan of a write is the requests it sends, on %s", (_name, kind) => {
  it("a plain entity: one request per write", async () => {
    const { db, store } = await setup(kind);
    const repo = db.repository(Plain);
    const p = Object.assign(new Plain(), { group: "g", id: "1", n: 1 });
    const steps = await sendsItsPlan(store, explain(repo, "insert", p), () => repo.insert(p));
    expect(steps).toHaveLength(1);
    await sendsItsPlan(store, explain(repo, "upsert", p), () => repo.upsert(p));
    await sendsItsPlan(store, explain(repo, "delete", p), () => repo.delete(p));
  });

  it("an indexed entity with a summary: its copy and summary row ride in one transaction", async () => {
    const { db, store } = await setup(kind);
    const repo = db.repository(Indexed);
    const item = Object.assign(new Indexed(), { group: "g", id: "1", color: "red", n: 5 });
    const steps = await sendsItsPlan(store, explain(repo, "insert", item), () => repo.insert(item));
    expect(steps.find((s) => s.phase === "commit")?.operations?.map((o) => o.kind)).toEqual([
      "insert",
      "insert copy (byColor)",
      "insert summary (perGroup)",
    ]);
    const read = (await repo.get(item)) as Indexed;
    store.sent.length = 0;
    read.color = "blue";
    read.n = 7;
    await sendsItsPlan(store, explain(repo, "update", read), () => repo.update(read));
    // An instance this context has not read: its row is read first (which also gives the summary delta).
    const untracked = Object.assign(new Indexed(), { group: "g", id: "1", color: "green", n: 9 });
    const update = await sendsItsPlan(store, explain(repo, "update", untracked, [read]), () =>
      repo.update(untracked, { ifMatch: "*" }),
    );
    expect(update[0]?.request).toBe("get (current copies)");
    await sendsItsPlan(store, explain(repo, "delete", untracked), () => repo.delete(untracked));
    expect(await repo.summary("perGroup", { group: "g" })).toEqual({ items: 0, total: 0 });
  });

  it("a summarized entity without indexes: its summary row rides in the entity's transaction", async () => {
    const { db, store } = await setup(kind);
    const repo = db.repository(Summed);
    const item = Object.assign(new Summed(), { group: "g", id: "1", n: 5 });
    // Cold: the summary row is read first; then it is cached and an insert is one request.
    const cold = await sendsItsPlan(store, explain(repo, "insert", item), () => repo.insert(item));
    expect(cold.map((s) => `${s.phase} ${s.request}`)).toEqual([
      "before get (summary perGroup)",
      "commit transaction",
    ]);
    expect(cold.find((s) => s.phase === "commit")?.operations?.map((o) => o.kind)).toEqual([
      "insert",
      "insert summary (perGroup)",
    ]);
    const second = Object.assign(new Summed(), { group: "g", id: "2", n: 1 });
    const warm = await sendsItsPlan(store, explain(repo, "insert", second), () => repo.insert(second));
    expect(warm).toHaveLength(1);
    item.n = 7;
    await sendsItsPlan(store, explain(repo, "update", item), () => repo.update(item));
    await sendsItsPlan(store, explain(repo, "upsert", item), () => repo.upsert(item));
    await sendsItsPlan(store, explain(repo, "patch", { group: "g", id: "2", n: 4 }), () =>
      repo.patch({ group: "g", id: "2" }, { n: 4 }),
    );
    // An instance this context has not read: its row is read first, for the summary delta (it has no copies).
    const untracked = Object.assign(new Summed(), { group: "g", id: "1", n: 8 });
    const update = await sendsItsPlan(store, explain(repo, "update", untracked, [item]), () =>
      repo.update(untracked, { ifMatch: "*" }),
    );
    expect(update[0]?.request).toBe("get (stored row)");
    await sendsItsPlan(store, explain(repo, "delete", untracked), () => repo.delete(untracked));
    expect(await repo.summary("perGroup", { group: "g" })).toEqual({ items: 1, total: 4 });
  });

  it("a large value: uploaded before the row, the replaced blob removed after", async () => {
    const { db, store } = await setup(kind);
    const repo = db.repository(Large);
    const l = Object.assign(new Large(), { group: "g", id: "1", body: Uint8Array.from([1, 2, 3]) });
    const steps = await sendsItsPlan(store, explain(repo, "insert", l), () => repo.insert(l));
    expect(steps.map((s) => s.phase)).toEqual(["before", "commit"]);
    l.body = Uint8Array.from([4, 5]);
    const upsert = await sendsItsPlan(store, explain(repo, "upsert", l), () => repo.upsert(l));
    expect(upsert.map((s) => methodOf(s))).toEqual(["getEntity", "putBlob", "upsert", "deleteBlob"]);
    expect((await repo.get(l))?.body).toEqual(Uint8Array.from([4, 5]));
  });

  it("a wide entity: its rows in one transaction, read first unless its tracked ETag lists them", async () => {
    const { db, store } = await setup(kind);
    const repo = db.repository(Wide);
    const part = (i: number) => partRowKey("1", i);
    const commitOf = (steps: WriteStep[]) => steps.find((s) => s.phase === "commit")?.operations;
    const w = wide("1", 300);
    const insert = await sendsItsPlan(store, explain(repo, "insert", w), () => repo.insert(w));
    expect(commitOf(insert)).toEqual([
      { kind: "insert", rowKey: part(0) },
      { kind: "insert part", rowKey: part(1) },
    ]);
    // Tracked: the rows are known without a read; the shorter version deletes the second row.
    for (let i = 10; i < 300; i++) w[`v${i}`] = undefined;
    const update = await sendsItsPlan(store, explain(repo, "update", w), () => repo.update(w));
    expect(update).toHaveLength(1);
    expect(commitOf(update)).toEqual([
      { kind: "update", rowKey: part(0) },
      { kind: "delete part", rowKey: part(1) },
    ]);
    // An upsert of the tracked instance needs no read either: one transaction on its rows' ETags.
    w.v0 = 2;
    const tracked = await sendsItsPlan(store, explain(repo, "upsert", w), () => repo.upsert(w));
    expect(tracked.map((s) => `${s.phase} ${s.request}`)).toEqual(["commit transaction"]);
    // An ETag the caller states is the condition: no read, and a stale one fails the transaction.
    const stated = Object.assign(wide("1", 10), { v0: 3 });
    const current = etagOf(w) as string;
    store.sent.length = 0;
    await repo.update(stated, { ifMatch: current });
    expect(store.sent.map((r) => r.method)).toEqual(["submitTransaction"]);
    store.sent.length = 0;
    await expect(repo.update(wide("1", 10), { ifMatch: current })).rejects.toThrow(ConcurrencyError);
    expect(store.sent.map((r) => r.method)).toEqual(["submitTransaction"]);
    // An upsert reads the stored rows' keys first; the plan is exact for the stored version it is given
    // (one row now): that row replaced conditional on the ETag read, the second row inserted.
    const longer = wide("1", 300);
    const now = (await repo.get({ group: "g", id: "1" })) as Wide;
    store.sent.length = 0;
    const upsert = await sendsItsPlan(store, explain(repo, "upsert", longer, [now]), () =>
      repo.upsert(longer),
    );
    expect(upsert.map((s) => `${s.phase} ${s.request}`)).toEqual([
      "before query (stored rows' keys)",
      "commit transaction",
    ]);
    expect(commitOf(upsert)).toEqual([
      { kind: "update", rowKey: part(0) },
      { kind: "insert part", rowKey: part(1) },
    ]);
    expect(store.batches.at(-1)).toBe(2);
    await sendsItsPlan(store, explain(repo, "patch", { group: "g", id: "1", v0: 7 }), () =>
      repo.patch({ group: "g", id: "1" }, { v0: 7 }),
    );
    const shorter = wide("1", 10);
    const patched = (await repo.get({ group: "g", id: "1" })) as Wide;
    store.sent.length = 0;
    await sendsItsPlan(store, explain(repo, "update", shorter, [patched]), () =>
      repo.update(shorter, { ifMatch: "*" }),
    );
    await deletesAsPlanned(store, repo);
  });

  it("a wide entity with an index: its rows and copy in one transaction, its rows read as a range", async () => {
    const { db, store } = await setup(kind);
    const repo = db.repository(WideIndexed);
    const item = Object.assign(new WideIndexed(), { group: "g", id: "1", color: "red" });
    const insert = await sendsItsPlan(store, explain(repo, "insert", item), () => repo.insert(item));
    expect(insert.find((s) => s.phase === "commit")?.operations).toEqual([
      { kind: "insert", rowKey: partRowKey("item_1", 0) },
      { kind: "insert copy (byColor)", rowKey: "color_red_1" },
    ]);
    // Not read by this context: its rows (and copies) are read first.
    const untracked = Object.assign(new WideIndexed(), { group: "g", id: "1", color: "blue" });
    const update = await sendsItsPlan(store, explain(repo, "update", untracked, [item]), () =>
      repo.update(untracked, { ifMatch: "*" }),
    );
    expect(update[0]?.request).toBe("query (current copies)");
    // An upsert not tracked reads the rows first too (an insert would fail on the stored rows): one
    // range query and one transaction, the stale copy deleted in it.
    const blind = Object.assign(new WideIndexed(), { group: "g", id: "1", color: "green" });
    const upsert = await sendsItsPlan(store, explain(repo, "upsert", blind, [untracked]), () =>
      repo.upsert(blind),
    );
    expect(upsert.map((s) => `${s.phase} ${s.request}`)).toEqual([
      "before query (current copies)",
      "commit transaction",
    ]);
    expect((await repo.get({ group: "g", id: "1" }))?.color).toBe("green");
    // A merge reads the entity once: the version it merges onto is the one it checks.
    store.sent.length = 0;
    const merge = Object.assign(new WideIndexed(), { group: "g", id: "1", color: "gray" });
    await repo.update(merge, { mode: "merge", ifMatch: "*" });
    expect(store.sent.map((r) => r.method)).toEqual(["queryPage", "submitTransaction"]);
    store.sent.length = 0;
    // Nothing stored: the read finds nothing and the transaction inserts.
    const fresh = Object.assign(new WideIndexed(), { group: "g", id: "2", color: "red" });
    await sendsItsPlan(store, explain(repo, "upsert", fresh), () => repo.upsert(fresh));
    expect(await db.verifyIndexes(WideIndexed)).toEqual({ missing: [], stale: [], orphans: [] });
    store.sent.length = 0;
    await deletesAsPlanned(store, repo);
  });

  it("an entity with copies elsewhere: intent, claim, transaction, copy, settle, intent removed", async () => {
    const { db, store } = await setup(kind);
    const repo = db.repository(Remote);
    const r = Object.assign(new Remote(), { group: "g", id: "1", code: "C1", tag: "t" });
    const steps = await sendsItsPlan(store, explain(repo, "insert", r), () => repo.insert(r));
    expect(steps.map((s) => `${s.phase} ${s.request}`)).toEqual([
      "before insert intent",
      "before claim (byCode)",
      "commit transaction",
      // The claim stamped with the version committed, conditional on the claim's ETag (issue 34).
      "after replace copy (byCode)",
      "after upsert copy (byTag)",
      "after get (settle race)",
      "after delete intent",
    ]);
    const read = (await repo.get(r)) as Remote;
    store.sent.length = 0;
    read.code = "C2";
    read.tag = "u";
    await sendsItsPlan(store, explain(repo, "update", read), () => repo.update(read));
    // The unique value kept (not claimed again): its copy read after the commit, then replaced
    // conditional on that read's ETag (only over this write's own, issue 34).
    const kept = (await repo.get(r)) as Remote;
    store.sent.length = 0;
    kept.tag = "v";
    const keeping = await sendsItsPlan(store, explain(repo, "update", kept), () => repo.update(kept));
    expect(keeping.map((s) => `${s.phase} ${s.request}`)).toEqual([
      "before insert intent",
      "commit transaction",
      "after get kept copy (byCode)",
      "after replace copy (byCode)",
      "after upsert copy (byTag)",
      "after get replaced copy (byTag)",
      "after delete replaced copy (byTag)",
      "after get (settle race)",
      "after delete intent",
    ]);
    expect(await db.verifyIndexes(Remote)).toEqual({ missing: [], stale: [], orphans: [] });
  });
});

/**
 * The Order model (a same-partition index, a unique index in another table, a summary, a large
 * invoice, an encrypted column): a seeded sequence of writes of every form, each explained for the
 * state a read just returned (`current`), then sent. The requests sent are the plan's, step for
 * step, and each entity group transaction holds the plan's operation count.
 */
const SEED = testSeed(3030);
type Form = "insert" | "upsert" | "update" | "patch" | "delete";
interface Write {
  form: Form;
  /** Which of four orders (two customers). */
  at: number;
  version: number;
  /** Write the instance the read returned (its tracked state) rather than a new one. */
  tracked: boolean;
}
const writes = fc.array(
  fc.record({
    form: fc.constantFrom<Form>("insert", "upsert", "update", "patch", "delete"),
    at: fc.nat({ max: 3 }),
    version: fc.integer({ min: 1, max: 4 }),
    tracked: fc.boolean(),
  }),
  { minLength: 4, maxLength: 10 },
);

/** Order `at` in its `version`: the status, the amount and the unique number change with it. */
function orderAt(at: number, version: number): Order {
  return Object.assign(order(`c${at % 2}`, at + 1, version), { number: `N${at + 1}_${version % 2}` });
}

/** A context on `kind` with the Order model's table (its encrypted column keyed), recording the requests sent. */
async function orderContext(kind: Kind) {
  const store = new RecordingStore(kind.create());
  const db = new TableContext({
    store,
    tablePrefix: uniquePrefix(),
    encryption: { keys: localKeys({ k1: randomBytes(32) }, "k1") },
  });
  await db.ensureTables(Order);
  return { store, db, orders: db.repository(Order) };
}

/** After the writes, the orders' index copies and summaries are exact. */
async function expectOrdersConsistent(db: TableContext): Promise<void> {
  expect(await db.verifyIndexes(Order)).toEqual({ missing: [], stale: [], orphans: [] });
  expect(await db.verifySummaries(Order)).toEqual([]);
}

/**
 * Runs `compare` over `runs` seeded samples of `samples`; the samples compared more writes than there
 * are runs (a run that skipped every write would compare nothing).
 */
async function expectCompared<T>(
  runs: number,
  samples: fc.Arbitrary<T>,
  compare: (sample: T) => Promise<number>,
): Promise<void> {
  let compared = 0;
  await fc.assert(
    fc.asyncProperty(samples, async (sample) => {
      compared += await compare(sample);
    }),
    { seed: SEED, numRuns: runs },
  );
  expect(compared).toBeGreaterThan(runs);
}

/** Sends each write explained for the state read just before it; resolves how many were compared. */
async function writesAsPlanned(kind: Kind, sequence: readonly Write[]): Promise<number> {
  const { store, db, orders } = await orderContext(kind);
  let compared = 0;
  for (const { form, at, version, tracked } of sequence) {
    const key = { customer: `c${at % 2}`, orderId: orderAt(at, 1).orderId };
    const stored = await orders.get(key);
    const current = stored ? [stored] : [];
    const next = orderAt(at, version);
    // What the plan cannot know is left out: the outcome of a write refused by what is stored (an
    // insert of a stored order), and an untracked upsert of a stored order (tried as an insert first).
    let explain: () => WriteStep[];
    let write: () => Promise<unknown>;
    if (form === "insert" || (form === "upsert" && (!tracked || !stored))) {
      if (stored) continue;
      explain = () => orders.explainWrite(form, next, { current }).steps;
      write = () => (form === "insert" ? orders.insert(next) : orders.upsert(next));
    } else if (form === "delete") {
      const target = tracked && stored ? stored : key;
      explain = () => orders.explainWrite("delete", target, { current }).steps;
      write = () => orders.delete(target);
    } else {
      if (!stored) continue;
      if (form === "patch") {
        const changes = { status: next.status, amount: next.amount };
        explain = () => orders.explainWrite("patch", { ...key, ...changes }, { current }).steps;
        write = () => orders.patch(key, changes);
      } else {
        const value = tracked ? Object.assign(stored, next) : next;
        explain = () => orders.explainWrite(form, value, { current }).steps;
        write = () => (form === "update" ? orders.update(value, { ifMatch: "*" }) : orders.upsert(value));
      }
    }
    const what = `${form} (tracked: ${tracked}, stored: ${stored !== undefined})`;
    await expectSentAsExplained(store, async () => ({ steps: explain() }), write, what);
    compared++;
  }
  await expectOrdersConsistent(db);
  return compared;
}

describe.each(blobStores)(
  `the Order model sends its plans, for every write form (seed ${SEED}), on %s`,
  (name, kind) => {
    it("each write's requests are its plan's, step for step, from the state a read returned", async () => {
      // A seeded sample on the services, the full run on the reference store (all in memory).
      const runs = name === "memory" ? 25 : 2;
      await expectCompared(runs, writes, (sequence) => writesAsPlanned(kind, sequence));
    });
  },
);

/** A transaction of one to three orders of one customer, each an insert, upsert, update or delete. */
const transactions = fc.array(
  fc.record({
    customer: fc.constantFrom("c0", "c1"),
    operations: fc.uniqueArray(
      fc.record({
        id: fc.integer({ min: 1, max: 4 }),
        form: fc.constantFrom("insert", "upsert", "update", "delete"),
        version: fc.integer({ min: 1, max: 4 }),
        tracked: fc.boolean(),
      }),
      { minLength: 1, maxLength: 3, selector: (o) => o.id },
    ),
  }),
  { minLength: 3, maxLength: 6 },
);

function orderOf(customer: string, id: number, version: number): Order {
  return Object.assign(order(customer, id, version), { number: `N${customer}${id}_${version % 2}` });
}

/** Sends each transaction explained for the state read just before it; resolves how many were compared. */
async function transactionsAsPlanned(
  kind: Kind,
  sequence: ReadonlyArray<{
    customer: string;
    operations: Array<{ id: number; form: string; version: number; tracked: boolean }>;
  }>,
): Promise<number> {
  const { store, db, orders } = await orderContext(kind);
  let compared = 0;
  for (const { customer, operations } of sequence) {
    const current: Order[] = [];
    const writes: Array<(tx: Parameters<Parameters<TableContext["transaction"]>[0]>[0]) => void> = [];
    for (const { id, form, version, tracked } of operations) {
      const key = { customer, orderId: orderOf(customer, id, 1).orderId };
      const stored = await orders.get(key);
      if (stored) current.push(stored);
      const next = orderOf(customer, id, version);
      // A write the service refuses (an insert of a stored order, an update or delete of an absent
      // one) fails the whole transaction: its plan is the requests up to the refusal, not compared here.
      if ((form === "insert") === (stored !== undefined)) {
        if (form === "insert" || form === "update" || form === "delete") continue;
      }
      const value = tracked && stored ? Object.assign(stored, next) : next;
      if (form === "insert") writes.push((tx) => tx.insert(next));
      else if (form === "upsert") writes.push((tx) => tx.upsert(value));
      else if (form === "update") writes.push((tx) => tx.update(value, { ifMatch: "*" }));
      else writes.push((tx) => tx.delete(Order, tracked && stored ? stored : key));
    }
    if (writes.length === 0) continue;
    const build = (tx: Parameters<Parameters<TableContext["transaction"]>[0]>[0]) => {
      for (const write of writes) write(tx);
    };
    await expectSentAsExplained(
      store,
      () => db.explainTransaction(build, { current }),
      () => db.transaction(build),
      `transaction ${JSON.stringify(operations)}`,
    );
    compared++;
  }
  await expectOrdersConsistent(db);
  return compared;
}

describe.each(blobStores)(
  `the Order model's transactions send their plans (seed ${SEED}), on %s`,
  (name, kind) => {
    it("each transaction's requests are its plan's, from the state reads returned", async () => {
      const runs = name === "memory" ? 20 : 2;
      await expectCompared(runs, transactions, (sequence) => transactionsAsPlanned(kind, sequence));
    });
  },
);

/** Bulk writes of up to 40 orders of two customers: which are stored first, and what is written. */
const bulks = fc.record({
  stored: fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 20 }),
  upserted: fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 40 }),
  version: fc.integer({ min: 2, max: 4 }),
});

/** The orders `ids` of customers c2 and c3 (by parity), stored now, as reads return them. */
async function readBack(orders: Repository<Order>, ids: readonly number[]): Promise<Order[]> {
  const found = await Promise.all(
    ids.map((id) => orders.get({ customer: `c${2 + (id % 2)}`, orderId: orderOf("c", id, 1).orderId })),
  );
  return found.filter((o): o is Order => o !== undefined);
}

async function bulkAsPlanned(
  kind: Kind,
  { stored, upserted, version }: { stored: number[]; upserted: number[]; version: number },
): Promise<void> {
  const { store, db, orders } = await orderContext(kind);
  const at = (id: number, v: number) => orderOf(`c${2 + (id % 2)}`, id, v);
  await orders.bulkUpsert(stored.map((id) => at(id, 1)));
  const items = upserted.map((id) => at(id, version));
  const current = await readBack(orders, upserted);
  await expectSentAsExplained(
    store,
    () => orders.explainBulk("upsert", items, { current }),
    () => orders.bulkUpsert(items),
    "bulkUpsert",
  );
  // Deletes of stored orders (a delete of one already gone is refused and sent again without it).
  const gone = (await readBack(orders, stored)).map((o) => ({ customer: o.customer, orderId: o.orderId }));
  const now = await readBack(orders, stored);
  await expectSentAsExplained(
    store,
    () => orders.explainBulk("delete", gone, { current: now }),
    () => orders.bulkDelete(gone),
    "bulkDelete",
  );
  await expectOrdersConsistent(db);
}

describe.each(blobStores)(
  `the Order model's bulk writes send their plans (seed ${SEED}), on %s`,
  (name, kind) => {
    it("each batch's requests are its plan's (batches in any order), from the state reads returned", async () => {
      await fc.assert(
        fc.asyncProperty(bulks, (bulk) => bulkAsPlanned(kind, bulk)),
        { seed: SEED, numRuns: name === "memory" ? 8 : 1 },
      );
    });
  },
);

/** Moves of orders between customers in `db.eventually`: the order deleted where it is, inserted at the other. */
const moves = fc.array(
  fc.record({
    id: fc.integer({ min: 1, max: 3 }),
    tracked: fc.boolean(),
    renumber: fc.boolean(),
    touch: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  }),
  { minLength: 2, maxLength: 5 },
);

async function movesAsPlanned(
  kind: Kind,
  sequence: ReadonlyArray<{ id: number; tracked: boolean; renumber: boolean; touch: number | undefined }>,
): Promise<number> {
  const { store, db, orders } = await orderContext(kind);
  const where = new Map<number, { customer: string; version: number }>();
  for (const id of [1, 2, 3]) {
    await orders.insert(orderOf("c4", id, 1));
    where.set(id, { customer: "c4", version: 1 });
  }
  let compared = 0;
  for (const [n, { id, tracked, renumber, touch }] of sequence.entries()) {
    const from = where.get(id) as { customer: string; version: number };
    const key = { customer: from.customer, orderId: orderOf("c", id, 1).orderId };
    const stored = (await orders.get(key)) as Order;
    const to = from.customer === "c4" ? "c5" : "c4";
    const version = renumber ? from.version + 1 : from.version;
    const moved = orderOf(to, id, version);
    // Another order of the source customer rewritten in the same set (an upsert of a stored order).
    const other = touch !== undefined && touch !== id ? where.get(touch) : undefined;
    const otherKey = other && { customer: other.customer, orderId: orderOf("c", touch as number, 1).orderId };
    const otherStored = otherKey && ((await orders.get(otherKey)) as Order);
    const current = [stored, ...(otherStored ? [otherStored] : [])];
    const build = (tx: Parameters<Parameters<TableContext["eventually"]>[0]>[0]) => {
      tx.delete(Order, tracked ? stored : key);
      tx.insert(moved);
      if (other && otherKey) tx.upsert(orderOf(other.customer, touch as number, other.version + 2));
    };
    await expectSentAsExplained(
      store,
      () => db.explainEventually(build, { current }),
      () => db.eventually(build),
      `move ${n}`,
    );
    where.set(id, { customer: to, version });
    if (other && touch !== undefined) where.set(touch, { ...other, version: other.version + 2 });
    compared++;
  }
  await expectOrdersConsistent(db);
  return compared;
}

describe.each(blobStores)(
  `the Order model's eventual moves send their plans (seed ${SEED}), on %s`,
  (name, kind) => {
    it("each eventual transaction's requests are its plan's, from the state reads returned", async () => {
      const runs = name === "memory" ? 10 : 1;
      await expectCompared(runs, moves, (sequence) => movesAsPlanned(kind, sequence));
    });
  },
);

/** A change-fed entity with a copy and a summary row in its partition (they ride along, recording no change). */
@Entity({
  table: "PlanFed",
  partitionKey: "{group}",
  rowKey: "item_{id}",
  changeFeed: true,
  indexes: { byColor: { rowKey: "color_{color}_{id}" } },
  summaries: { perGroup: { rowKey: "summary", count: "items", sum: { n: "total" } } },
})
class Fed {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) color!: string;
  @Column({ type: "Int32" }) n!: number;
}

/** A change-fed entity with nothing else: each write is the feed's query and transaction. */
@Entity({ table: "PlanFedPlain", partitionKey: "{group}", rowKey: "{id}", changeFeed: true })
class FedPlain {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) n!: number;
}

describe.each(blobStores)(
  "change-fed entities send their plans with the feed's requests, on %s",
  (_name, kind) => {
    async function fedWorld() {
      const store = new RecordingStore(kind.create());
      const db = new TableContext({ store, tablePrefix: uniquePrefix() });
      await db.ensureTables(Fed, FedPlain);
      // The directory's table is created by the first change-fed write (a plan cannot know it is missing).
      await db.repository(FedPlain).insert(Object.assign(new FedPlain(), { group: "warm", id: "w", n: 0 }));
      return { db, store };
    }

    /** Explains, sends, and compares step for step (with each `$batch`'s operation count). */
    async function asPlanned(
      store: RecordingStore,
      explain: () => WriteStep[] | Promise<{ steps: WriteStep[] }>,
      write: () => Promise<unknown>,
      what: string,
    ): Promise<WriteStep[]> {
      store.sent.length = 0;
      store.batches.length = 0;
      const explained = await explain();
      const steps = Array.isArray(explained) ? explained : explained.steps;
      expect(store.sent, "explaining sends nothing").toEqual([]);
      await write();
      expect(store.sent.length, what).toBeGreaterThan(0);
      expectSentAsPlanned(store, steps, what);
      return steps;
    }

    const plain = (id: string, n: number, group = "g") => Object.assign(new FedPlain(), { group, id, n });
    const fed = (id: string, color: string, n: number) =>
      Object.assign(new Fed(), { group: "g", id, color, n });
    const shape = (steps: WriteStep[]) => steps.map((s) => `${s.phase} ${s.request}`);
    const commitKinds = (steps: WriteStep[]) =>
      steps.find((s) => s.phase === "commit")?.operations?.map((o) => o.kind);

    it("single writes: the directory once, the state query, one transaction with head, journal and tombstone", async () => {
      const { db, store } = await fedWorld();
      const repo = db.repository(FedPlain);
      const first = await asPlanned(
        store,
        explain(repo, "insert", plain("1", 1)),
        () => repo.insert(plain("1", 1)),
        "insert",
      );
      expect(shape(first)).toEqual([
        "before upsert (feed directory)",
        "before query (feed head and versions)",
        "commit transaction",
      ]);
      expect(commitKinds(first)).toEqual(["feed head", "insert", "insert feed journal"]);
      const upsert = await asPlanned(
        store,
        explain(repo, "upsert", plain("1", 2)),
        () => repo.upsert(plain("1", 2)),
        "upsert",
      );
      expect(shape(upsert)).toEqual(["before query (feed head and versions)", "commit transaction"]);
      await asPlanned(
        store,
        explain(repo, "patch", { group: "g", id: "1", n: 3 }),
        () => repo.patch({ group: "g", id: "1" }, { n: 3 }),
        "patch",
      );
      const stored = (await repo.get({ group: "g", id: "1" })) as FedPlain;
      stored.n = 4;
      await asPlanned(store, explain(repo, "update", stored), () => repo.update(stored), "update tracked");
      const key = { group: "g", id: "1" };
      const now = (await repo.get(key)) as FedPlain;
      const deleted = await asPlanned(
        store,
        explain(repo, "delete", key, [now]),
        () => repo.delete(key),
        "delete",
      );
      expect(commitKinds(deleted)).toEqual([
        "feed head",
        "delete",
        "insert feed journal",
        "upsert feed tombstone",
      ]);
      // Nothing stored: the state query finds nothing, the delete is sent as it is and records no change.
      store.sent.length = 0;
      const absent = await sendsItsPlan(store, explain(repo, "delete", key), () => repo.delete(key));
      expect(shape(absent)).toEqual(["before query (feed head and versions)", "commit delete"]);
      const { changes } = await db.changes(FedPlain).read();
      const ofG = changes.filter((c) => c.key.partitionKey === "g");
      expect(ofG.map((c) => `${c.kind} ${c.version}`)).toEqual([
        "upsert 1",
        "upsert 2",
        "merge 3",
        "upsert 4",
        "delete 5",
      ]);
    });

    it("with a copy and a summary row: they ride in the transaction and record no change", async () => {
      const { db, store } = await fedWorld();
      const repo = db.repository(Fed);
      const insert = await asPlanned(
        store,
        explain(repo, "insert", fed("1", "red", 5)),
        () => repo.insert(fed("1", "red", 5)),
        "insert",
      );
      expect(commitKinds(insert)).toEqual([
        "feed head",
        "insert",
        "insert copy (byColor)",
        "insert summary (perGroup)",
        "insert feed journal",
      ]);
      const read = (await repo.get({ group: "g", id: "1" })) as Fed;
      read.color = "blue";
      await asPlanned(store, explain(repo, "update", read), () => repo.update(read), "update");
      const untracked = fed("1", "green", 9);
      const now = (await repo.get({ group: "g", id: "1" })) as Fed;
      await asPlanned(
        store,
        explain(repo, "update", untracked, [now]),
        () => repo.update(untracked, { ifMatch: "*" }),
        "update untracked",
      );
      await asPlanned(store, explain(repo, "delete", untracked), () => repo.delete(untracked), "delete");
      expect(await db.verifySummaries(Fed)).toEqual([]);
      expect((await db.changes(Fed).read()).changes.map((c) => c.version)).toEqual([1, 2, 3, 4]);
    });

    it("a transaction, bulk batches and db.eventually: the feed's rows in each $batch as planned", async () => {
      const { db, store } = await fedWorld();
      const repo = db.repository(FedPlain);
      await repo.insert(plain("0", 0));
      const stored = (await repo.get({ group: "g", id: "0" })) as FedPlain;
      const tx = (t: Parameters<Parameters<TableContext["transaction"]>[0]>[0]) => {
        t.insert(plain("1", 1));
        t.upsert(plain("2", 2));
        t.delete(FedPlain, stored);
        t.delete(FedPlain, { group: "g", id: "absent" });
      };
      // The delete of an absent row fails the transaction: explained without it, then sent.
      const build = (t: Parameters<typeof tx>[0]) => {
        t.insert(plain("1", 1));
        t.upsert(plain("2", 2));
        t.delete(FedPlain, stored);
      };
      const steps = await asPlanned(
        store,
        () => db.explainTransaction(build, { current: [stored] }),
        () => db.transaction(build),
        "transaction",
      );
      expect(commitKinds(steps)).toEqual([
        "feed head",
        "insert",
        "upsert",
        "delete",
        "insert feed journal",
        "insert feed journal",
        "insert feed journal",
        "upsert feed tombstone",
      ]);
      expect(typeof tx).toBe("function");
      // 40 items of one partition (listed already) and 3 of a new one: 33 per batch with the feed's rows.
      const items = [
        ...Array.from({ length: 40 }, (_, i) => plain(`b${i}`, i)),
        ...Array.from({ length: 3 }, (_, i) => plain(`h${i}`, i, "h")),
      ];
      const bulk = await asPlanned(
        store,
        () => repo.explainBulk("insert", items),
        () => repo.bulkInsert(items),
        "bulkInsert",
      );
      expect(
        bulk
          .filter((s) => s.request === "transaction")
          .map((s) => s.operations?.length ?? 0)
          .sort((a, b) => a - b),
      ).toEqual([1 + 2 * 3, 1 + 2 * 7, 1 + 2 * 33]);
      const gone = items.slice(0, 5).map((i) => ({ group: i.group, id: i.id }));
      const current = await Promise.all(gone.map((k) => repo.get(k)));
      await asPlanned(
        store,
        () => repo.explainBulk("delete", gone, { current: current as FedPlain[] }),
        () => repo.bulkDelete(gone),
        "bulkDelete",
      );
      // The intents' table is created by the first eventual transaction (a plan cannot know it is missing).
      await db.eventually((t) => t.insert(plain("e", 0, "warm")));
      const moved = (await repo.get({ group: "h", id: "h0" })) as FedPlain;
      const move = (t: Parameters<Parameters<TableContext["eventually"]>[0]>[0]) => {
        t.delete(FedPlain, moved);
        t.insert(plain("h0", 7));
      };
      await asPlanned(
        store,
        () => db.explainEventually(move, { current: [moved] }),
        () => db.eventually(move),
        "eventually",
      );
    });
  },
);
