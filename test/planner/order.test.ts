/**
 * Features compose (issue 18): the Order model — a same-partition index, a unique index in another
 * table, a summary per customer, a large invoice, an encrypted card holder, a Json column — through
 * every write form, with every invariant checked after each phase.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { localKeys, type TableContext, UniqueConstraintError } from "../../src/index.js";
import type { TableStore } from "../../src/store/table-store.js";
import { blobStores, freshContext } from "../fixtures/context.js";
import { employee, RsEmployee } from "../summaries-remote/models.js";
import { Order, order } from "./order-model.js";

const key = randomBytes(32);

async function setup(kind: (typeof blobStores)[number][1]) {
  const { db, counter, prefix } = await freshContext(kind, [Order], {
    encryption: { keys: localKeys({ k1: key }, "k1") },
  });
  return { db, store: counter as TableStore, prefix, counter };
}

async function blobCount(store: TableStore, prefix: string): Promise<number> {
  const page = await store.blobs?.list(`tablekit-${`${prefix}Orders`.toLowerCase()}`);
  return page?.items.length ?? 0;
}

/** Every invariant: summaries = recount, indexes exact, invoices exact, one blob per invoice, card holder sealed. */
async function checkAll(db: TableContext, store: TableStore, prefix: string, expected: Map<string, Order>) {
  const orders = db.repository(Order);
  expect(await db.verifySummaries(Order)).toEqual([]);
  const drift = await db.verifyIndexes(Order);
  expect(drift).toEqual({ missing: [], stale: [], orphans: [] });
  let blobs = 0;
  for (const want of expected.values()) {
    const got = await orders.get(want);
    expect(got?.invoice).toEqual(want.invoice);
    expect(got?.cardHolder).toBe(want.cardHolder);
    expect(got?.lines).toEqual(want.lines);
    expect(got?.amount).toBe(want.amount);
    if (want.invoice) blobs++;
    const byNumber = await orders.index("byNumber").get({ number: want.number });
    expect(byNumber?.orderId).toBe(want.orderId);
    const raw = await store.getEntity(`${prefix}Orders`, want.customer, `order_${want.orderId}`);
    expect(JSON.stringify(raw)).not.toContain(want.cardHolder);
  }
  expect(await blobCount(store, prefix)).toBe(blobs);
  const customers = new Set([...expected.values()].map((o) => o.customer));
  for (const customer of customers) {
    const mine = [...expected.values()].filter((o) => o.customer === customer);
    expect(await orders.summary("perCustomer", { customer })).toEqual({
      orders: mine.length,
      total: mine.reduce((s, o) => s + o.amount, 0),
    });
    const open = await orders.index("byStatus").find({ customer }).toArray();
    expect(open.map((o) => o.orderId).sort()).toEqual(mine.map((o) => o.orderId).sort());
  }
}

describe.each(blobStores)("the Order model on %s", (_name, kind) => {
  it("declares and keeps every invariant through every write form", async () => {
    const { db, store, prefix } = await setup(kind);
    const orders = db.repository(Order);
    const expected = new Map<string, Order>();
    const put = (o: Order) => expected.set(`${o.customer}/${o.orderId}`, o);

    // insert, upsert, update, patch, delete
    for (let i = 1; i <= 4; i++) {
      const o = order("c1", i);
      await orders.insert(o);
      put(o);
    }
    await checkAll(db, store, prefix, expected);
    const dup = Object.assign(order("c1", 9), { number: "N1" });
    await expect(orders.insert(dup)).rejects.toBeInstanceOf(UniqueConstraintError);
    const up = order("c1", 2, 2);
    await orders.upsert(up);
    put(up);
    const read = (await orders.get({ customer: "c1", orderId: "o0003" })) as Order;
    read.amount = 999;
    read.status = "shipped";
    await orders.update(read);
    put(read);
    await checkAll(db, store, prefix, expected);
    await orders.patch({ customer: "c1", orderId: "o0004" }, { status: "paid", amount: 5 });
    put(Object.assign(expected.get("c1/o0004") as Order, { status: "paid", amount: 5 }));
    await orders.delete({ customer: "c1", orderId: "o0001" });
    expected.delete("c1/o0001");
    await checkAll(db, store, prefix, expected);

    // mutate
    await orders.mutate({ customer: "c1", orderId: "o0002" }, (o) => {
      o.amount += 1;
      o.invoice = Uint8Array.from([1, 2, 3]);
    });
    const m = expected.get("c1/o0002") as Order;
    m.amount += 1;
    m.invoice = Uint8Array.from([1, 2, 3]);
    await checkAll(db, store, prefix, expected);

    // db.transaction: two inserts and a delete
    const t1 = order("c1", 10);
    const t2 = order("c1", 11);
    await db.transaction((tx) => {
      tx.insert(t1);
      tx.insert(t2);
      tx.delete(Order, { customer: "c1", orderId: "o0003" });
    });
    put(t1);
    put(t2);
    expected.delete("c1/o0003");
    await checkAll(db, store, prefix, expected);
    await expect(
      db.transaction((tx) => tx.insert(Object.assign(order("c1", 12), { number: "N10" }))),
    ).rejects.toBeInstanceOf(UniqueConstraintError);
    await checkAll(db, store, prefix, expected);

    // bulk
    const many = Array.from({ length: 40 }, (_, i) => order(i % 2 === 0 ? "c2" : "c3", 100 + i));
    const result = await orders.bulkUpsert(many);
    expect(result.failed).toEqual([]);
    for (const o of many) put(o);
    await checkAll(db, store, prefix, expected);
    const gone = many.slice(0, 20);
    const deleted = await orders.bulkDelete(gone.map((o) => ({ customer: o.customer, orderId: o.orderId })));
    expect(deleted.failed).toEqual([]);
    for (const o of gone) expected.delete(`${o.customer}/${o.orderId}`);
    await checkAll(db, store, prefix, expected);

    // db.eventually: move an order between customers
    const moving = expected.get("c1/o0010") as Order;
    const moved = Object.assign(order("c4", 10), { number: moving.number });
    await db.eventually((tx) => {
      tx.delete(Order, { customer: "c1", orderId: "o0010" });
      tx.insert(moved);
    });
    expected.delete("c1/o0010");
    put(moved);
    await checkAll(db, store, prefix, expected);
  });
});

describe("explainWrite", () => {
  it("renders each write's plan without sending anything", async () => {
    const { db, counter, prefix } = await setup(blobStores[0]?.[1] as (typeof blobStores)[number][1]);
    const orders = db.repository(Order);
    const o = order("c1", 7);
    const insert = orders.explainWrite("insert", o);
    expect(counter.requests).toBe(0);
    expect(insert.steps.map((s) => [s.phase, s.request, s.table])).toEqual([
      ["before", "putBlob (invoice)", `tablekit-${prefix.toLowerCase()}orders`],
      ["before", "insert intent", `${prefix}TablekitIntents`],
      ["before", "claim (byNumber)", `${prefix}OrderNumbers`],
      // The summary row is not cached yet in this context: the first write reads it.
      ["before", "get (summary perCustomer)", `${prefix}Orders`],
      ["commit", "transaction", `${prefix}Orders`],
      // The claimed copy written again, stamped with the version committed (conditional on the claim's ETag).
      ["after", "replace copy (byNumber)", `${prefix}OrderNumbers`],
      ["after", "get (settle race)", `${prefix}Orders`],
      ["after", "delete intent", `${prefix}TablekitIntents`],
    ]);
    expect(insert.steps[4]?.operations).toEqual([
      { kind: "insert", rowKey: "order_o0007" },
      { kind: "insert copy (byStatus)", rowKey: "status_open_o0007" },
      { kind: "insert summary (perCustomer)", rowKey: "summary" },
    ]);
    // Nothing assumed stored: the delete reads, finds nothing, and sends nothing more.
    const key = { customer: "c1", orderId: "o0007" };
    expect(orders.explainWrite("delete", key).steps.map((s) => s.request)).toEqual([
      "get (large references)",
      "get (current copies)",
    ]);
    // The order as stored: its row, its same-partition copy and its summary in one transaction.
    const remove = orders.explainWrite("delete", key, { current: [o] });
    expect(remove.steps.filter((s) => s.phase === "after").map((s) => s.request)).toEqual([
      // Read first: removed only if the version deleted made it (copy-stamp.ts).
      "get replaced copy (byNumber)",
      "delete copy (byNumber)",
      "get (settle race)",
      "delete intent",
      "deleteBlob (replaced invoice)",
    ]);
    expect(remove.steps.find((s) => s.phase === "commit")?.operations).toEqual([
      { kind: "delete", rowKey: "order_o0007" },
      { kind: "delete copy (byStatus)", rowKey: "status_open_o0007" },
      // The summary row is not given (nor cached), but the order is stored, so the row that counts it
      // is: read, then replaced on its ETag (as sent: wire-plan.test.ts).
      { kind: "update summary (perCustomer)", rowKey: "summary" },
    ]);
    expect(counter.requests).toBe(0);
  });

  it("a summary kept in another partition: its intent before the commit, its contribution after", async () => {
    const { db, counter } = await freshContext(blobStores[0]?.[1] as (typeof blobStores)[number][1], [
      RsEmployee,
    ]);
    const plan = db.repository(RsEmployee).explainWrite("insert", employee("eu", "sales", 1, 10));
    const requests = plan.steps.map((s) => `${s.phase} ${s.request}`);
    expect(requests.indexOf("before insert summary intent")).toBeLessThan(
      requests.indexOf("commit transaction"),
    );
    // Nothing cached in a fresh context: the contribution is read, then inserted (a plan assumes absence).
    const read = requests.indexOf("after get contribution (perRegion)");
    expect(read).toBeGreaterThan(requests.indexOf("commit transaction"));
    expect(requests[read + 1]).toBe("after insert contribution (perRegion)");
    expect(requests.at(-1)).toBe("after delete summary intent");
    expect(counter.requests).toBe(0);
  });
});
