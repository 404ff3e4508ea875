/**
 * Every write form of a change-fed entity records exactly its committed changes: read back page by
 * page, the kinds, versions (1..n per entity), entities and resumed positions are what the writes
 * made (an oracle kept here), failed writes record nothing, and the feed's rows never show up in
 * entity reads. On every store of the run.
 */
import { describe, expect, it } from "vitest";
import {
  type Change,
  Column,
  ConcurrencyError,
  Entity,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  TableContext,
  type TableStore,
  TransactionError,
  ValidationError,
} from "../../src/index.js";
import { withChangeReason } from "../../src/repository/core/change-reason.js";
import { rejectionOf } from "../support/rejection.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";
import { unsortedStoreKinds } from "../support/unsorted-stores.js";
import { declareOrder, type Order, type OrderClass, order } from "./feed-models.js";

/** The ids of a bulk insert into one partition. */
const BOBS = Array.from({ length: 40 }, (_, i) => i + 1);

async function world(kind: { create(): TableStore }) {
  const db = new TableContext({ store: kind.create(), tablePrefix: uniquePrefix("fd") });
  const Order = declareOrder();
  await db.ensureTables(Order);
  return { db, Order, orders: db.repository(Order) };
}

/** Every change, read in pages of `limit`, each page resumed from the previous `next`. */
async function readAll(db: TableContext, Order: OrderClass, limit: number): Promise<Change<Order>[]> {
  const all: Change<Order>[] = [];
  let from: string | undefined;
  for (;;) {
    const page = await db.changes(Order).read({ ...(from === undefined ? {} : { from }), limit });
    expect(page.changes.length).toBeLessThanOrEqual(limit);
    all.push(...page.changes);
    if (page.changes.length === 0) {
      expect(page.next).toBe(from ?? page.next);
      return all;
    }
    from = page.next;
  }
}

function summary(changes: Change<Order>[]) {
  return changes.map((c) => ({
    kind: c.kind,
    key: `${c.key.partitionKey}/${c.key.rowKey}`,
    version: c.version,
    amount: c.entity?.amount ?? c.changes?.amount,
  }));
}

/** Every store of the run, and the Cosmos-flavoured reference store (results unsorted) once per seed. */
const STORES = [...storeKinds, ...unsortedStoreKinds].map((k) => [k.name, k] as const);

describe.each(STORES)("change feed writes on %s", (_name, kind) => {
  it("records single writes, mutate, patch and delete with versions 1..n, and a re-insert continues", async () => {
    const { db, Order, orders } = await world(kind);
    await orders.insert(order(Order, "alice", "o1", 10));
    await orders.upsert(order(Order, "alice", "o1", 11));
    const o1 = await orders.get({ customer: "alice", orderId: "o1" });
    if (o1 === undefined) throw new Error("o1 missing");
    o1.amount = 12;
    await orders.update(o1);
    await orders.patch({ customer: "alice", orderId: "o1" }, { status: "paid" });
    await orders.mutate({ customer: "alice", orderId: "o1" }, (o) => {
      o.amount = 13;
    });
    await orders.delete({ customer: "alice", orderId: "o1" });
    await orders.insert(order(Order, "alice", "o1", 14));
    await orders.insert(order(Order, "bob", "o2", 20));

    const changes = await readAll(db, Order, 2);
    // No order is promised across partitions (a page takes from each): compared partition by partition.
    const alice = changes.filter((c) => c.key.partitionKey === "alice");
    const bob = changes.filter((c) => c.key.partitionKey === "bob");
    expect(summary([...alice, ...bob])).toEqual([
      { kind: "upsert", key: "alice/o1", version: 1, amount: 10 },
      { kind: "upsert", key: "alice/o1", version: 2, amount: 11 },
      { kind: "upsert", key: "alice/o1", version: 3, amount: 12 },
      { kind: "merge", key: "alice/o1", version: 4, amount: undefined },
      { kind: "upsert", key: "alice/o1", version: 5, amount: 13 },
      { kind: "delete", key: "alice/o1", version: 6, amount: undefined },
      { kind: "upsert", key: "alice/o1", version: 7, amount: 14 },
      { kind: "upsert", key: "bob/o2", version: 1, amount: 20 },
    ]);
    // A patch writes its columns and the key columns (stored as properties too).
    expect(alice[3]?.changes).toEqual({ customer: "alice", orderId: "o1", status: "paid" });
    expect(alice[4]?.entity).toMatchObject({
      customer: "alice",
      orderId: "o1",
      amount: 13,
      status: "paid",
    });
    expect(alice[4]?.entity).toBeInstanceOf(Order);

    // Resuming from any change's position gives exactly the changes after it.
    const third = alice[2] as Change<Order>;
    const rest = await db.changes(Order).read({ from: third.position, limit: 100 });
    expect(summary(rest.changes)).toEqual(summary(changes.slice(changes.indexOf(third) + 1)));

    // The feed's rows are no entities: reads see the two orders only.
    expect((await orders.find({ customer: "alice" }).toArray()).map((o) => o.amount)).toEqual([14]);
    expect(await orders.scan().toArray()).toHaveLength(2);
  });

  it("records nothing for failed writes, and each failure is the error of the write without the feed", async () => {
    const { db, Order, orders } = await world(kind);
    await orders.insert(order(Order, "alice", "o1", 10));
    expect(await rejectionOf(orders.insert(order(Order, "alice", "o1", 99)))).toBeInstanceOf(
      EntityAlreadyExistsError,
    );
    const stale = await orders.get({ customer: "alice", orderId: "o1" });
    if (stale === undefined) throw new Error("o1 missing");
    await orders.upsert(order(Order, "alice", "o1", 11));
    stale.amount = 98;
    expect(await rejectionOf(orders.update(stale))).toBeInstanceOf(ConcurrencyError);
    expect(
      await rejectionOf(
        orders.patch({ customer: "alice", orderId: "none" }, { amount: 1 }, { ifMatch: "*" }),
      ),
    ).toBeInstanceOf(EntityNotFoundError);
    const failed = await rejectionOf(
      db.transaction((tx) => {
        tx.insert(order(Order, "alice", "o3", 30));
        tx.insert(order(Order, "alice", "o1", 97));
      }),
    );
    expect(failed).toBeInstanceOf(TransactionError);
    expect((failed as TransactionError).index).toBe(1);
    await orders.delete({ customer: "alice", orderId: "absent" });

    const changes = await readAll(db, Order, 100);
    expect(summary(changes)).toEqual([
      { kind: "upsert", key: "alice/o1", version: 1, amount: 10 },
      { kind: "upsert", key: "alice/o1", version: 2, amount: 11 },
    ]);
  });

  it("records transactions and bulk writes in one partition's order, each entity's versions consecutive", async () => {
    const { db, Order, orders } = await world(kind);
    await db.transaction((tx) => {
      tx.insert(order(Order, "alice", "o1", 1));
      tx.insert(order(Order, "alice", "o2", 2));
    });
    // 40 items of one partition: more than a batch holds with the change rows (33), so two batches.
    const inserted = await orders.bulkInsert(BOBS.map((i) => order(Order, "bob", `b${i}`, i)));
    expect(inserted.failed).toEqual([]);
    await db.transaction((tx) => {
      tx.upsert(order(Order, "alice", "o1", 3));
      tx.delete(Order, { customer: "alice", orderId: "o2" });
    });
    await orders.bulkDelete([1, 2].map((i) => ({ customer: "bob", orderId: `b${i}` })));
    const changes = await readAll(db, Order, 3);
    const alice = summary(changes.filter((c) => c.key.partitionKey === "alice"));
    expect(alice).toEqual([
      { kind: "upsert", key: "alice/o1", version: 1, amount: 1 },
      { kind: "upsert", key: "alice/o2", version: 1, amount: 2 },
      { kind: "upsert", key: "alice/o1", version: 2, amount: 3 },
      { kind: "delete", key: "alice/o2", version: 2, amount: undefined },
    ]);
    const bob = summary(changes.filter((c) => c.key.partitionKey === "bob"));
    expect(
      bob
        .filter((c) => c.kind === "upsert")
        .map((c) => c.key)
        .sort(),
    ).toEqual(BOBS.map((i) => `bob/b${i}`).sort());
    expect(
      bob
        .filter((c) => c.kind === "delete")
        .map((c) => [c.key, c.version])
        .sort(),
    ).toEqual([
      ["bob/b1", 2],
      ["bob/b2", 2],
    ]);
    expect(await orders.scan().toArray()).toHaveLength(BOBS.length - 2 + 1);
  });

  it("records the reason of an expiry sweep's delete (ttl), and none for the caller's own writes", async () => {
    const { db, Order, orders } = await world(kind);
    await orders.insert(order(Order, "alice", "o1", 10));
    await withChangeReason("ttl", () => orders.delete({ customer: "alice", orderId: "o1" }));
    const { changes } = await db.changes(Order).read();
    expect(changes.map((c) => [c.kind, c.version, c.reason])).toEqual([
      ["upsert", 1, undefined],
      ["delete", 2, "ttl"],
    ]);
  });

  it("refuses, before any request, a transaction whose change rows would pass 100 operations", async () => {
    const { db, Order } = await world(kind);
    // 50 inserts need 50 journal rows and the head: 101 operations.
    const error = await rejectionOf(
      db.transaction((tx) => {
        for (let i = 0; i < 50; i++) tx.insert(order(Order, "alice", `o${i}`, i));
      }),
    );
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/need 51 more for their change feed/);
    await db.transaction((tx) => {
      for (let i = 0; i < 49; i++) tx.insert(order(Order, "alice", `o${i}`, i));
    });
    expect((await db.changes(Order).read()).changes).toHaveLength(49);
  });

  it("reads a table per period's changes from every period, and a dropped period's with its table gone", async () => {
    const db = new TableContext({ store: kind.create(), tablePrefix: uniquePrefix("fp") });
    @Entity({ table: "FeedLogs{at:month}", partitionKey: "{device}", rowKey: "{seq:6}", changeFeed: true })
    class Log {
      @Column({ type: "String" }) device!: string;
      @Column({ type: "Int32" }) seq!: number;
      @Column({ type: "DateTime" }) at!: Date;
    }
    const logs = db.repository(Log);
    const log = (seq: number, month: number) =>
      Object.assign(new Log(), { device: "d1", seq, at: new Date(Date.UTC(2026, month, 2)) });
    await logs.insert(log(1, 0));
    await logs.insert(log(2, 1));
    await logs.upsert(log(2, 1));
    const all = await db.changes(Log).read();
    expect(all.changes.map((c) => `${c.key.rowKey}@${c.version}`)).toEqual([
      "000001@1",
      "000002@1",
      "000002@2",
    ]);
    await db.dropTables(Log, { before: new Date(Date.UTC(2026, 1, 1)) });
    const left = await db.changes(Log).read();
    expect(left.changes.map((c) => `${c.key.rowKey}@${c.version}`)).toEqual(["000002@1", "000002@2"]);
  });
});
