/**
 * A change exists exactly when its write committed, once: change-fed writes whose transaction answers
 * are lost (applied, then the connection drops) and which the retry policy sends again record one
 * change each, with versions 1..n and no duplicate. Faults are decided per request by a seeded plan
 * (seed, request keys, attempt), on every store of the run: MemoryStore behind `FaultyStore`, Azurite
 * and serve behind the HTTP fault proxy.
 */
import { describe, expect, it } from "vitest";
import { TableContext } from "../../src/index.js";
import { FAST_RETRY, faultyStores, freshPrefix, storeNames } from "../writes/harness.js";
import { declareOrder, order } from "./feed-models.js";

const UPSERTS = 12;
const TRANSACTIONS = 4;
const BULK = 5;

describe.each(storeNames)("change feed under lost answers on %s", (name) => {
  it("records one change per committed write when the answers of its commits are lost and resent", async () => {
    const stores = await faultyStores(name, {
      seed: 31,
      rate: 0.5,
      mix: ["lost"],
      methods: ["submitTransaction"],
    });
    try {
      const prefix = freshPrefix();
      const Order = declareOrder();
      const db = new TableContext({ store: stores.store, tablePrefix: prefix, retry: FAST_RETRY });
      await db.ensureTables(Order);
      const orders = db.repository(Order);
      for (let i = 1; i <= UPSERTS; i++) await orders.upsert(order(Order, "alice", "o1", i));
      for (let i = 1; i <= TRANSACTIONS; i++) {
        await db.transaction((tx) => {
          tx.upsert(order(Order, "alice", "o2", 100 + i));
          tx.upsert(order(Order, "alice", "o3", 200 + i));
        });
      }
      await orders.delete({ customer: "alice", orderId: "o1" });
      const bulk = await orders.bulkInsert(
        Array.from({ length: BULK }, (_, i) => order(Order, "bob", `b${i + 1}`, i + 1)),
      );
      expect(bulk.failed).toEqual([]);
      // The plan lost answers of commits (each then sent again): otherwise this test proves nothing.
      expect(stores.plan.faultsByMethod.submitTransaction.lost).toBeGreaterThanOrEqual(5);

      const reader = new TableContext({ store: stores.direct, tablePrefix: prefix });
      const { changes } = await reader.changes(Order).read({ limit: 1000 });
      const seen = changes.map((c) => [c.key.partitionKey, c.key.rowKey, c.kind, c.version]);
      const expected = [
        ...Array.from({ length: UPSERTS }, (_, i) => ["alice", "o1", "upsert", i + 1]),
        ...Array.from({ length: TRANSACTIONS }, (_, i) => [
          ["alice", "o2", "upsert", i + 1],
          ["alice", "o3", "upsert", i + 1],
        ]).flat(),
        ["alice", "o1", "delete", UPSERTS + 1],
        ...Array.from({ length: BULK }, (_, i) => ["bob", `b${i + 1}`, "upsert", 1]),
      ];
      // One partition's changes arrive in commit order; partitions in no order between them.
      const byPartition = (pk: string, rows: unknown[][]) => rows.filter((row) => row[0] === pk);
      expect(byPartition("alice", seen)).toEqual(byPartition("alice", expected));
      expect(
        byPartition("bob", seen)
          .map((row) => row.join("/"))
          .sort(),
      ).toEqual(
        byPartition("bob", expected)
          .map((row) => row.join("/"))
          .sort(),
      );
      expect(changes.filter((c) => c.key.rowKey === "o3").map((c) => c.entity?.amount)).toEqual([
        201, 202, 203, 204,
      ]);
    } finally {
      await stores.close();
    }
  });
});
