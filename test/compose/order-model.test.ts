/**
 * Issue 18's held-out scenario, through the public API only: the `Order` model (same-partition
 * index, unique index in another table, summary per customer, large invoice, encrypted card holder,
 * Json lines) written through every write form on every store, with every invariant checked after
 * each phase against an oracle kept here (never read back from the code under test); the plan of an
 * insert explained without a request; and a composite upsert crashed after each of its requests,
 * then repaired by a fresh context, reading back as one whole version.
 */
import { describe, expect, it } from "vitest";
import { type Repository, TableContext, type WriteStep } from "../../src/index.js";
import { uniquePrefix } from "../support/table-names.js";
import { CrashAfterStore } from "./crash-after-store.js";
import {
  declareOrder,
  type Expected,
  expectedOf,
  expectInvariants,
  keyOf,
  listInvoiceBlobs,
  makeOrder,
  NUMBER_TABLE,
  ORDER_ENCRYPTION,
  ORDER_TABLE,
  type Order,
  type OrderWorld,
  orderStoreKinds,
  SUMMARY_ROW_KEY,
  viewOf,
} from "./order-model.js";

const stores = orderStoreKinds.map((kind) => [kind.name, kind] as const);
const CUSTOMERS = ["alice", "bob"] as const;

/** A context on fresh tables of `kind`, with a request counter (tables and blobs) under it. */
async function world(kind: (typeof orderStoreKinds)[number]) {
  const store = new CrashAfterStore(kind.create());
  const prefix = uniquePrefix("co");
  const db = new TableContext({ store, tablePrefix: prefix, encryption: ORDER_ENCRYPTION });
  const Order = declareOrder();
  await db.ensureTables(Order);
  const orders = db.repository(Order);
  const w: OrderWorld = { db, store: store.inner, prefix, customers: CUSTOMERS };
  return { w, store, orders, Order };
}

/** What a phase writes through: one context's orders and the oracle it keeps up to date. */
interface Phase {
  w: OrderWorld;
  orders: Repository<Order>;
  OrderClass: typeof Order;
  expected: Expected;
}

/** Inserts `count` orders (ids from `first`, alternating customers), into the oracle too. */
async function seed(p: Phase, first: number, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const o = makeOrder(CUSTOMERS[i % 2] as string, first + i, 1);
    await p.orders.insert(o);
    p.expected.set(keyOf(o), o);
  }
}

/**
 * The phases of the held-out scenario. Each seeds its own orders from id `base` (so they run alone
 * on fresh tables, or one after the other on the same tables) and checks every invariant after each write.
 */
const PHASES = {
  async "single writes (insert, upsert, update, patch, delete)"(p: Phase, base: number) {
    const { w, orders, expected } = p;
    await seed(p, base + 1, 6);
    await expectInvariants(w, expected, "after inserts");
    // Upsert a new order and replace an existing one (new status, number, invoice, amount).
    const created = makeOrder("alice", base + 7, 1);
    const replaced = makeOrder("bob", base + 2, 2);
    await orders.upsert(created);
    await orders.upsert(replaced);
    expected.set(keyOf(created), created).set(keyOf(replaced), replaced);
    await expectInvariants(w, expected, "after upserts");

    // A conditional update of what was read; version 5 has no invoice, so its blob goes.
    const read = await orders.getOrThrow({ customer: "alice", orderId: base + 3 });
    const v5 = makeOrder("alice", base + 3, 5);
    expect(v5.invoice).toBeUndefined();
    await orders.update(Object.assign(read, v5, { invoice: undefined }));
    expected.set(keyOf(v5), v5);
    await expectInvariants(w, expected, "after update");

    // A patch of an indexed, a summed and an encrypted column.
    const changes = { status: "closed", quantity: 33, cardHolder: "Patched Holder" };
    await orders.patch({ customer: "bob", orderId: base + 4 }, changes);
    const patched = Object.assign(makeOrder("bob", base + 4, 1), changes);
    expected.set(keyOf(patched), patched);
    await expectInvariants(w, expected, "after patch");

    expect(await orders.delete({ customer: "alice", orderId: base + 5 })).toBe(true);
    expect(await orders.delete({ customer: "alice", orderId: base + 5 })).toBe(false);
    expected.delete(`alice/${base + 5}`);
    await expectInvariants(w, expected, "after delete");
  },

  async "mutate (an existing order and a created one)"(p: Phase, base: number) {
    const { w, orders, expected } = p;
    await seed(p, base + 1, 2);
    const v2 = makeOrder("alice", base + 1, 2);
    const written = await orders.mutate({ customer: "alice", orderId: base + 1 }, (o) => {
      Object.assign(o, v2);
    });
    expect(viewOf(written)).toEqual(viewOf(v2));
    expected.set(keyOf(v2), v2);
    await expectInvariants(w, expected, "after mutate");
    const created = makeOrder("bob", base + 9, 3);
    await orders.mutate(
      { customer: "bob", orderId: base + 9 },
      (o) => {
        o.quantity = created.quantity;
      },
      { create: () => makeOrder("bob", base + 9, 3) },
    );
    expected.set(keyOf(created), created);
    await expectInvariants(w, expected, "after mutate creating an order");
  },

  async "a db.transaction of two inserts and a delete"(p: Phase, base: number) {
    const { w, expected, OrderClass } = p;
    await seed(p, base + 1, 2);
    const a = makeOrder("alice", base + 10, 1);
    const b = makeOrder("alice", base + 11, 2);
    await w.db.transaction((tx) => {
      tx.insert(a);
      tx.insert(b);
      tx.delete(OrderClass, { customer: "alice", orderId: base + 1 });
    });
    expected.set(keyOf(a), a).set(keyOf(b), b);
    expected.delete(`alice/${base + 1}`);
    await expectInvariants(w, expected, "after the transaction");
  },

  async "bulkUpsert of 40 orders, then bulkDelete of 20"(p: Phase, base: number) {
    const { w, orders, expected } = p;
    await seed(p, base + 1, 10);
    // 10 replace the seeded orders, 30 are new.
    const batch = [
      ...Array.from({ length: 10 }, (_, i) =>
        makeOrder(CUSTOMERS[i % 2] as string, base + 1 + i, 2 + (i % 4)),
      ),
      ...Array.from({ length: 30 }, (_, i) =>
        makeOrder(CUSTOMERS[i % 2] as string, base + 100 + i, 1 + (i % 5)),
      ),
    ];
    const upserted = await orders.bulkUpsert(batch);
    expect(upserted.written).toBe(40);
    expect(upserted.failed).toEqual([]);
    for (const o of batch) expected.set(keyOf(o), o);
    await expectInvariants(w, expected, "after bulkUpsert");

    const doomed = batch.slice(0, 20).map((o) => ({ customer: o.customer, orderId: o.orderId }));
    const deleted = await orders.bulkDelete(doomed);
    expect(deleted.written).toBe(20);
    expect(deleted.failed).toEqual([]);
    for (const key of doomed) expected.delete(keyOf(key));
    await expectInvariants(w, expected, "after bulkDelete");
  },

  async "an eventual move between customers"(p: Phase, base: number) {
    const { w, expected, OrderClass } = p;
    await seed(p, base + 1, 3);
    const from = expected.get(`alice/${base + 3}`) as Order;
    // The same order (and number) under another customer: the delete releases the number first.
    const moved = Object.assign(makeOrder("bob", base + 3, 1), { number: from.number });
    const result = await w.db.eventually((tx) => {
      tx.delete(OrderClass, { customer: "alice", orderId: base + 3 });
      tx.insert(moved);
    });
    expect(result.outcomes).toEqual(["applied", "applied"]);
    expected.delete(`alice/${base + 3}`);
    expected.set(keyOf(moved), moved);
    await expectInvariants(w, expected, "after the eventual move");
  },
} satisfies Record<string, (p: Phase, base: number) => Promise<void>>;

async function phaseOn(kind: (typeof orderStoreKinds)[number]): Promise<Phase> {
  const { w, orders, Order: OrderClass } = await world(kind);
  return { w, orders, OrderClass, expected: new Map() };
}

describe.each(stores)("the Order model (every feature at once) on %s", (_name, kind) => {
  it.each(Object.entries(PHASES))("%s keeps every invariant", async (_phase, run) => {
    await run(await phaseOn(kind), 0);
  });

  it("every phase in order on the same tables keeps every invariant; verifySummaries is empty at the end", async () => {
    const p = await phaseOn(kind);
    let base = 0;
    for (const [name, run] of Object.entries(PHASES)) {
      await run(p, base).catch((error: unknown) => {
        throw new Error(`phase '${name}' (ids from ${base}): ${String(error)}`, { cause: error });
      });
      base += 1000;
    }
    expect(await p.w.db.verifySummaries(p.OrderClass)).toEqual([]);
  });

  it("explainWrite('insert') sends nothing: blob upload, then one transaction, and the unique table", async () => {
    const { w, store, orders } = await world(kind);
    const order = makeOrder("alice", 1, 1);
    store.disarm();
    const plan = orders.explainWrite("insert", order);
    expect(store.log, "requests (tables and blobs) sent by explainWrite").toEqual([]);
    const { steps } = plan;
    const tables = (name: string) => [name, `${w.prefix}${name}`];
    const upload = steps.findIndex((s) => s.phase === "before" && /blob/i.test(s.request));
    expect(upload, `a blob upload before the commit in ${JSON.stringify(steps)}`).toBeGreaterThanOrEqual(0);
    const commits = steps.filter((s) => s.phase === "commit");
    expect(commits, "one commit").toHaveLength(1);
    const commit = commits[0];
    expect(tables(ORDER_TABLE)).toContain(commit?.table);
    expect(commit?.partitionKey).toBe("alice");
    expect(
      (commit?.operations ?? []).map((op) => op.rowKey).sort(),
      "the entity, its same-partition copy and the summary row",
    ).toEqual([`o_000001`, SUMMARY_ROW_KEY, `st_${order.status}_000001`].sort());
    expect(upload).toBeLessThan(steps.indexOf(commit as WriteStep));
    expect(
      steps.some((s) => tables(NUMBER_TABLE).includes(s.table)),
      `a step on the unique index's table in ${JSON.stringify(steps)}`,
    ).toBe(true);
    // Explaining wrote nothing.
    expect(await orders.get({ customer: "alice", orderId: 1 })).toBeUndefined();
    expect(await listInvoiceBlobs(w.store, w.prefix)).toEqual([]);
  });

  it("an upsert crashed after each of its requests, then repaired, reads back as one whole version", async () => {
    const { w, store, Order } = await world(kind);
    const open = () =>
      new TableContext({ store, tablePrefix: w.prefix, encryption: ORDER_ENCRYPTION, retry: false });
    // The composite upsert: status (same-partition copy), number (unique copy elsewhere), invoice
    // (a new blob, the old one removed) and summed columns all change.
    const oldVersion = (k: number) => makeOrder(`crash${k}`, 100 + k, 1);
    const newVersion = (k: number) => makeOrder(`crash${k}`, 100 + k, 2);

    // How many requests the upsert makes when nothing fails (the same shape for every k: own partition, cold context).
    const probe = open().repository(Order);
    await probe.insert(oldVersion(0));
    store.disarm();
    await probe.upsert(newVersion(0));
    const total = store.requests;
    const shape = [...store.log];
    expect(total, `requests of the upsert: ${shape.join(", ")}`).toBeGreaterThan(2);
    const expected: Expected = expectedOf([newVersion(0)]);

    for (let k = 1; k <= total; k++) {
      const orders = open().repository(Order);
      store.disarm();
      await orders.insert(oldVersion(k));
      store.arm(k - 1);
      // The crash may reject the upsert or hit only its clean-up: either way, repair settles it.
      await orders.upsert(newVersion(k)).catch(() => undefined);
      const where = `crash before request ${k} of ${total} (${store.log[k - 1]}; shape ${shape.join(", ")})`;
      store.disarm();
      const repairer = new TableContext({
        store: w.store,
        tablePrefix: w.prefix,
        encryption: ORDER_ENCRYPTION,
      });
      await repairer.repair({ minIntentAgeMs: 0, entities: [Order] });
      const got = await repairer.repository(Order).get({ customer: `crash${k}`, orderId: 100 + k });
      const whole = [viewOf(oldVersion(k)), viewOf(newVersion(k))];
      expect(whole, `${where}: one whole version`).toContainEqual(viewOf(got));
      expected.set(
        keyOf(newVersion(k)),
        viewOf(got)?.number === newVersion(k).number ? newVersion(k) : oldVersion(k),
      );
      await expectInvariants({ ...w, db: repairer, customers: [] }, expected, where, {
        focus: [`crash${k}`],
      });
    }
    // Crashing after the last request is no crash: the upsert resolves, the invariants hold at once.
    const last = open().repository(Order);
    store.disarm();
    await last.insert(oldVersion(total + 1));
    store.arm(total);
    await last.upsert(newVersion(total + 1));
    expect(store.requests).toBe(total);
    store.disarm();
    expected.set(keyOf(newVersion(total + 1)), newVersion(total + 1));
    await expectInvariants({ ...w, customers: [] }, expected, "no crash");
  });
});
