/**
 * Bulk writes of entities that keep more than their row: each batch of a partition is one
 * transaction plan (the one `db.transaction` runs), so a partition's entities, their same-partition
 * copies and its summary row commit together, a few transactions for many entities. Checked on the
 * held-out `Order` model (index here, unique index elsewhere, summary, large, encrypted, Json) and
 * on a wide indexed entity whose stored rows outnumber the estimate a batch is packed on.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext, TransactionError, ValidationError } from "../../src/index.js";
import { composeStoreKinds } from "../compose/compose-stores.js";
import {
  declareOrder,
  type Expected,
  expectInvariants,
  keyOf,
  makeOrder,
  ORDER_ENCRYPTION,
  ORDER_TABLE,
} from "../compose/order-model.js";
import { CountingStore } from "../support/counting-store.js";
import { rejectionOf } from "../support/rejection.js";
import { uniquePrefix } from "../support/table-names.js";

const CUSTOMERS = ["alice", "bob"] as const;

const VALUES = 1100;
const value = (i: number): string => `v${String(i).padStart(4, "0")}`;

/** A wide entity (its properties spread over rows: 1,100 set take 5) with an index in its partition. */
class Sheet {
  tenant!: string;
  id!: string;
  title!: string;
  [column: string]: unknown;
}
Column({ type: "String" })(Sheet.prototype, "tenant");
Column({ type: "String" })(Sheet.prototype, "id");
Column({ type: "String" })(Sheet.prototype, "title");
for (let i = 0; i < VALUES; i++) Column({ type: "Int32" })(Sheet.prototype, value(i));
Entity({
  table: "PbSheets",
  partitionKey: "{tenant}",
  rowKey: "s_{id}",
  wide: true,
  indexes: { byTitle: { rowKey: "t_{title}_{id}" } },
})(Sheet);

/** Sheet `id` titled `title` with `count` values, each distinct per sheet and title (a mix of versions shows). */
function sheet(id: number, title: string, count: number): Sheet {
  const s = Object.assign(new Sheet(), { tenant: "acme", id: `s${String(id).padStart(3, "0")}`, title });
  for (let i = 0; i < count; i++) s[value(i)] = id * 10_000 + i + (title === "new" ? 5_000 : 0);
  return s;
}

describe.each(composeStoreKinds.map((kind) => [kind.name, kind] as const))(
  "planned bulk writes on %s",
  (_name, kind) => {
    async function orderWorld() {
      const counter = new CountingStore(kind.create());
      const prefix = uniquePrefix("pb");
      const db = new TableContext({ store: counter, tablePrefix: prefix, encryption: ORDER_ENCRYPTION });
      const Order = declareOrder();
      await db.ensureTables(Order);
      counter.reset();
      const transactionsOnOrders = () =>
        counter.log.filter(
          (call) => call.method === "submitTransaction" && call.table === `${prefix}${ORDER_TABLE}`,
        ).length;
      return { db, counter, prefix, orders: db.repository(Order), transactionsOnOrders, Order };
    }

    it("a partition's orders, their copies and its summary row commit as one transaction per batch", async () => {
      const { db, prefix, orders, transactionsOnOrders, counter } = await orderWorld();
      const world = { db, store: counter, prefix, customers: CUSTOMERS };
      const expected: Expected = new Map();
      const batch = Array.from({ length: 40 }, (_, i) =>
        makeOrder(CUSTOMERS[i % 2] as string, i + 1, 1 + (i % 5)),
      );
      const inserted = await orders.bulkInsert(batch);
      expect(inserted).toMatchObject({ written: 40, failed: [] });
      for (const o of batch) expected.set(keyOf(o), o);
      // 20 orders a customer, each with its byStatus copy, and the summary row: 41 operations, one transaction.
      expect(inserted.batches).toBe(2);
      expect(transactionsOnOrders()).toBe(2);
      await expectInvariants(world, expected, "after bulkInsert");

      counter.reset();
      const changed = batch.slice(0, 10).map((o) => makeOrder(o.customer, o.orderId, 7));
      const upserted = await orders.bulkUpsert(changed);
      expect(upserted).toMatchObject({ written: 10, batches: 2, failed: [] });
      expect(transactionsOnOrders()).toBe(2);
      for (const o of changed) expected.set(keyOf(o), o);
      await expectInvariants(world, expected, "after bulkUpsert");

      counter.reset();
      // Keys already gone count as deleted: one transaction per customer, alice's sent again without
      // the key the service answered 404 for.
      const doomed = [...batch.slice(20, 30), makeOrder("alice", 999, 1)].map((o) => ({
        customer: o.customer,
        orderId: o.orderId,
      }));
      const deleted = await orders.bulkDelete(doomed);
      expect(deleted).toMatchObject({ written: 11, batches: 2, failed: [] });
      expect(transactionsOnOrders()).toBe(3);
      for (const key of doomed) expected.delete(keyOf(key));
      await expectInvariants(world, expected, "after bulkDelete");
    });

    it("a batch is atomic: a taken order number refuses its whole batch, the other partition commits", async () => {
      const { db, prefix, orders, counter } = await orderWorld();
      const world = { db, store: counter, prefix, customers: CUSTOMERS };
      const expected: Expected = new Map();
      const first = makeOrder("alice", 1, 1);
      await orders.insert(first);
      expected.set(keyOf(first), first);
      // Bob's second order takes alice's number: bob's batch fails whole, alice's commits.
      const batch = [
        makeOrder("alice", 2, 1),
        makeOrder("bob", 3, 1),
        Object.assign(makeOrder("bob", 4, 1), { number: first.number }),
      ];
      const result = await orders.bulkInsert(batch);
      expect(result.written).toBe(1);
      expect(result.failed.map((f) => [f.partitionKey, f.items.map((o) => o.orderId)])).toEqual([
        ["bob", [3, 4]],
      ]);
      expected.set(keyOf(batch[0] as (typeof batch)[number]), batch[0] as (typeof batch)[number]);
      await expectInvariants(world, expected, "after a refused batch");
    });

    it("a batch whose plan outgrows one transaction is sent as smaller ones, each whole", async () => {
      const counter = new CountingStore(kind.create());
      const db = new TableContext({ store: counter, tablePrefix: uniquePrefix("pbw") });
      await db.ensureTables(Sheet);
      const sheets = db.repository(Sheet);
      // Stored: 30 sheets of 5 rows each. The upsert packs them on their new size (one row, and two
      // operations for a copy that moves), but each also deletes its 4 other stored rows.
      const stored = Array.from({ length: 30 }, (_, i) => sheet(i, "old", VALUES));
      expect(await sheets.bulkUpsert(stored)).toMatchObject({ written: 30, failed: [] });
      counter.reset();
      const next = Array.from({ length: 30 }, (_, i) => sheet(i, "new", 3));
      const result = await sheets.bulkUpsert(next);
      expect(result).toMatchObject({ written: 30, failed: [] });
      // 30 × (1 row + 4 deleted rows + old copy deleted + new copy) = 210 operations: at least 3 transactions.
      expect(result.batches).toBeGreaterThanOrEqual(3);
      expect(counter.calls.submitTransaction).toBe(result.batches);
      const all = await sheets.find({ tenant: "acme" }).toArray();
      expect(all.map((s) => [s.id, s[value(0)], s[value(2)], s[value(3)]])).toEqual(
        next.map((s) => [s.id, s[value(0)], s[value(2)], undefined]),
      );
      const byTitle = await sheets.index("byTitle").find({ tenant: "acme" }).toArray();
      expect(byTitle.map((s) => s.title)).toEqual(next.map(() => "new"));
    });

    it("bad items of an array are refused before any request: a wide RowKey with a space, a bad index value", async () => {
      const counter = new CountingStore(kind.create());
      const db = new TableContext({ store: counter, tablePrefix: uniquePrefix("pbv") });
      await db.ensureTables(Sheet);
      const sheets = db.repository(Sheet);
      counter.reset();
      const spaced = await rejectionOf(
        sheets.bulkDelete([
          { tenant: "acme", id: "s001" },
          { tenant: "acme", id: "a b" },
        ]),
      );
      expect(spaced).toBeInstanceOf(ValidationError);
      expect((spaced as ValidationError).rule).toBe("wide-row-key");
      // A title holding a character no RowKey may hold ('/') cannot be its index copy's key.
      const slashed = await rejectionOf(sheets.bulkUpsert([sheet(1, "ok", 3), sheet(2, "a/b", 3)]));
      expect(slashed).toBeInstanceOf(ValidationError);
      expect(counter.requests).toBe(0);
    });

    it("a refused batch reports the transaction's error at the entity it failed on", async () => {
      const { orders } = await orderWorld();
      await orders.insert(makeOrder("alice", 2, 1));
      const result = await orders.bulkInsert([makeOrder("alice", 1, 1), makeOrder("alice", 2, 2)]);
      expect(result.written).toBe(0);
      const error = result.failed[0]?.error;
      expect(error).toBeInstanceOf(TransactionError);
      expect(error).toMatchObject({ statusCode: 409, index: 1 });
    });
  },
);
