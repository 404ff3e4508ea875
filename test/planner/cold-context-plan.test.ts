/**
 * Every write form of the order model (a same-partition index, a unique index elsewhere, a summary, a
 * large value, an encrypted column) explained and sent by a context that has cached nothing of what
 * another context wrote before it: a fresh process, as a service's next deployment is. Its plans read
 * what they are not given and must still be the requests it sends, `$batch` operations included.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { localKeys, TableContext, type TableStore, type WriteStep } from "../../src/index.js";
import { blobStores, uniquePrefix } from "../fixtures/context.js";
import { RecordingStore } from "../support/recording-store.js";
import { Order, order } from "./order-model.js";
import { expectSentAsExplained } from "./plan-compare.js";

/** An order with a number unique across customers (the unique index spans them). */
const at = (customer: string, id: number, version = 1): Order =>
  Object.assign(order(customer, id, version), { number: `N${customer}_${id}` });

/** The method each planned `$batch` operation is sent as (`update` is the conditional replace). */
const plannedBatches = (steps: readonly WriteStep[]) =>
  steps
    .filter((step) => step.phase === "commit" && step.request === "transaction")
    .map((step) => (step.operations ?? []).map((operation) => operation.kind.split(" ")[0]));

describe.each(blobStores)("plans of a context that has cached nothing, on %s", (_name, kind) => {
  it("single writes, a transaction, a bulk upsert and an eventual move send what they explain", async () => {
    const backend = kind.create();
    const prefix = uniquePrefix();
    const keys = localKeys({ k1: randomBytes(32) }, "k1");
    const contextOn = (store: TableStore) =>
      new TableContext({ store, tablePrefix: prefix, encryption: { keys } });
    const seeding = contextOn(backend);
    await seeding.ensureTables(Order);
    await seeding.repository(Order).bulkUpsert([1, 2, 3, 4, 5].map((id) => at("c1", id)));
    await seeding.eventually((tx) => tx.insert(at("c9", 1)));

    /** A context new to these tables, behind its own recorder; `run` explains and sends in it. */
    const fresh = () => {
      const store = new RecordingStore(backend);
      const db = contextOn(store);
      const orders = db.repository(Order);
      const run = async (
        what: string,
        explain: () => Promise<{ steps: WriteStep[] }>,
        write: () => Promise<unknown>,
      ) => {
        const steps = await expectSentAsExplained(store, explain, write, what);
        const sent = store.batchOperations.map((operations) =>
          operations.map((operation) => operation.split(" ")[0]),
        );
        expect(sent, what).toEqual(plannedBatches(steps));
        store.batchOperations.length = 0;
        return steps;
      };
      return { db, orders, run };
    };
    const key = (id: number) => ({ customer: "c1", orderId: at("c1", id).orderId });

    {
      const { orders, run } = fresh();
      const stored = (await orders.get(key(1))) as Order;
      stored.amount = 99;
      await run(
        "update",
        async () => orders.explainWrite("update", stored),
        () => orders.update(stored),
      );
    }
    {
      const { orders, run } = fresh();
      // Read by this context (tracked): an untracked instance's upsert is tried as an insert first.
      const stored = (await orders.get(key(2))) as Order;
      Object.assign(stored, { status: "shipped", amount: 42 });
      await run(
        "upsert",
        async () => orders.explainWrite("upsert", stored),
        () => orders.upsert(stored),
      );
    }
    {
      const { orders, run } = fresh();
      const current = [(await orders.get(key(3))) as Order];
      await run(
        "patch",
        async () => orders.explainWrite("patch", { ...key(3), status: "shipped" }, { current }),
        () => orders.patch(key(3), { status: "shipped" }),
      );
    }
    {
      const { orders, run } = fresh();
      const current = [(await orders.get(key(4))) as Order];
      await run(
        "delete",
        async () => orders.explainWrite("delete", key(4), { current }),
        () => orders.delete(key(4)),
      );
    }
    {
      const { db, orders, run } = fresh();
      const five = (await orders.get(key(5))) as Order;
      const build = (tx: Parameters<Parameters<TableContext["transaction"]>[0]>[0]) => {
        tx.insert(at("c1", 6));
        tx.update(Object.assign(at("c1", 5, 3), { number: five.number }), { ifMatch: "*" });
        tx.delete(Order, key(1));
      };
      const one = (await orders.get(key(1))) as Order;
      await run(
        "transaction",
        () => db.explainTransaction(build, { current: [five, one] }),
        () => db.transaction(build),
      );
    }
    {
      const { orders, run } = fresh();
      const items = [2, 3, 5, 7, 8].map((id) => at("c1", id, 4));
      const current = (
        await Promise.all(items.map((o) => orders.get({ customer: o.customer, orderId: o.orderId })))
      ).filter((o): o is Order => o !== undefined);
      await run(
        "bulkUpsert",
        () => orders.explainBulk("upsert", items, { current }),
        () => orders.bulkUpsert(items),
      );
    }
    {
      const { db, orders, run } = fresh();
      const moving = (await orders.get({ customer: "c9", orderId: at("c9", 1).orderId })) as Order;
      const move = (tx: Parameters<Parameters<TableContext["eventually"]>[0]>[0]) => {
        tx.delete(Order, moving);
        tx.insert(at("c8", 1));
      };
      await run(
        "eventually",
        () => db.explainEventually(move, { current: [moving] }),
        () => db.eventually(move),
      );
    }
    const check = contextOn(backend);
    expect(await check.verifyIndexes(Order)).toEqual({ missing: [], stale: [], orphans: [] });
    expect(await check.verifySummaries(Order)).toEqual([]);
  });
});
