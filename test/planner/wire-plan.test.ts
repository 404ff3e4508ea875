/**
 * The plan is what goes on the wire (issue 30's held-out check). A recording HTTP proxy stands in front
 * of the service (Azurite, and `tablekit serve`); a user's `AzureStore` talks to it. For the Order model
 * (a same-partition index, a unique index in another table, a summary, an encrypted column) each write
 * form is explained through the public API for the state the store holds (`current`), then run, and the
 * HTTP requests the proxy saw are the plan's steps, step for step (method, table, PartitionKey, RowKey),
 * in order except within the runs of steps the plan marks as sent in parallel (compared as multisets),
 * and each `$batch`'s changeset holds the plan's commit operations (count, and row keys in order).
 *
 * Large values: on Azurite the model keeps its large `invoice` column and the proxy stands in front of
 * the Blob endpoint too, so blob uploads and deletes are recorded and compared like table requests.
 * `tablekit serve` speaks the Table protocol only, so there the same model without `invoice` is used.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AzureStore,
  Column,
  Entity,
  localKeys,
  type Repository,
  TableContext,
  type Transaction,
  type WriteStep,
} from "../../src/index.js";
import { uniquePrefix } from "../fixtures/context.js";
import { azuriteConnectionString, serveConnectionString } from "../support/azurite.js";
import {
  type BatchOperation,
  type RecordingProxy,
  startRecordingProxy,
  type WireRequest,
} from "../support/recording-proxy.js";
import { storeKinds } from "../support/stores.js";
import { Order, order } from "./order-model.js";

/** The Order model without its large column, for a service without a Blob endpoint. */
@Entity({
  table: "Orders",
  partitionKey: "{customer}",
  rowKey: "order_{orderId}",
  indexes: {
    byStatus: { rowKey: "status_{status}_{orderId}" },
    byNumber: { table: "OrderNumbers", partitionKey: "n", rowKey: "{number}", unique: true },
  },
  summaries: { perCustomer: { rowKey: "summary", count: "orders", sum: { amount: "total" } } },
})
class TableOrder {
  @Column({ type: "String" }) customer!: string;
  @Column({ type: "String" }) orderId!: string;
  @Column({ type: "String" }) status!: string;
  @Column({ type: "String" }) number!: string;
  @Column({ type: "Int32" }) amount!: number;
  @Column({ type: "String", encrypt: true }) cardHolder!: string;
  @Column({ type: "Json" }) lines!: Array<{ sku: string; qty: number }>;
}

const services = storeKinds
  .filter((kind) => kind.name !== "memory")
  .map((kind) =>
    kind.name === "azurite"
      ? ([kind.name, { target: azuriteConnectionString, model: Order, blobs: true }] as const)
      : ([
          kind.name,
          { target: serveConnectionString, model: TableOrder as typeof Order, blobs: false },
        ] as const),
  );

/** The wire request a plan's step stands for (the store call `classifyRequest` names it by). */
function expectedOf(step: WriteStep): string {
  const { request } = step;
  let method: string;
  if (step.phase === "commit") method = request === "transaction" ? "submitTransaction" : request;
  else if (request.startsWith("get")) method = "getEntity";
  else if (request.startsWith("query")) method = "queryPage";
  else if (request.startsWith("putBlob")) method = "putBlob";
  else if (request.startsWith("deleteBlob")) method = "deleteBlob";
  // An intent is an upsert (its id is random: a retry must not fail on its own row).
  else if (request === "insert intent") method = "upsert";
  else if (request.startsWith("claim")) method = "insert";
  else if (request.startsWith("upsert")) method = "upsert";
  // A unique value's copy after the commit: a replace conditional on an ETag.
  else if (request.startsWith("replace")) method = "update";
  else if (request.startsWith("delete")) method = "delete";
  else method = request;
  return describeRequest({ method, table: step.table, partitionKey: step.partitionKey, rowKey: step.rowKey });
}

function describeRequest(r: Pick<WireRequest, "method" | "table" | "partitionKey" | "rowKey">): string {
  return `${r.method} ${r.table} ${r.partitionKey ?? "-"} ${r.rowKey ?? "-"}`;
}

/**
 * What the proxy saw is the plan: the steps cut into segments (a run of one `group` is one segment,
 * sent in any order; any other step is a segment of its own), each compared with as many requests sent.
 * A step the plan gives no keys for is compared without the keys the wire shows (a query, a blob).
 */
function expectWireIsPlan(seen: readonly WireRequest[], steps: readonly WriteStep[], what: string): void {
  const detail = `${what}\nplan: ${JSON.stringify(steps, null, 1)}\nwire: ${JSON.stringify(seen, null, 1)}`;
  expect(seen.length, detail).toBe(steps.length);
  const segments: number[][] = [];
  steps.forEach((step, i) => {
    const last = segments.at(-1);
    if (last && step.group !== undefined && steps[i - 1]?.group === step.group) last.push(i);
    else segments.push([i]);
  });
  for (const segment of segments) {
    const planned = segment.map((i) => steps[i] as WriteStep);
    const sent = segment.map((i) => seen[i] as WireRequest);
    const wire = sent.map((r, j) => {
      const step = planned.find((p) => sameAddress(p, r)) ?? planned[j];
      return describeRequest({
        ...r,
        partitionKey: step?.partitionKey === undefined ? undefined : r.partitionKey,
        rowKey: step?.rowKey === undefined ? undefined : r.rowKey,
      });
    });
    expect(wire.sort(), detail).toEqual(planned.map(expectedOf).sort());
    // Each `$batch` holds its commit step's operations, in order (batches sent together: by their rows).
    const rows = (operations: ReadonlyArray<{ rowKey: string | undefined }>) =>
      operations.map((o) => o.rowKey).join(",");
    const byRows = <T extends ReadonlyArray<{ rowKey: string | undefined }>>(list: T[]) =>
      [...list].sort((a, b) => rows(a).localeCompare(rows(b)));
    const plannedBatches = byRows(
      planned.flatMap((s) => (s.request === "transaction" ? [s.operations ?? []] : [])),
    );
    const sentBatches = byRows(sent.flatMap((r) => (r.operations ? [r.operations] : [])));
    expect(
      sentBatches.map((operations, b) => operations.map((o, i) => asPlanned(o, plannedBatches[b]?.[i]))),
      detail,
    ).toEqual(plannedBatches.map((operations) => operations.map(plannedOperation)));
  }
}

/**
 * The method a plan's operation is sent as: the first word of its kind (`insert copy`, `delete part`,
 * `insert summary`, …; `update` is conditional).
 */
function methodsOf(kind: string): string[] {
  return [kind.split(" ")[0] as string];
}

function plannedOperation(operation: { kind: string; rowKey: string }): string {
  return `${methodsOf(operation.kind).join("|")} ${operation.rowKey}`;
}

/** A `$batch` operation as sent, written as its planned operation when its method is one the plan allows. */
function asPlanned(operation: BatchOperation, planned: { kind: string; rowKey: string } | undefined): string {
  const allowed = planned !== undefined && methodsOf(planned.kind).includes(operation.method);
  return allowed
    ? plannedOperation({ ...planned, rowKey: operation.rowKey ?? "" })
    : `${operation.method} ${operation.rowKey}`;
}

/** Whether a request sent is addressed where a step is (the keys the step names). */
function sameAddress(step: WriteStep, sent: WireRequest): boolean {
  return (
    step.table === sent.table &&
    (step.partitionKey === undefined || step.partitionKey === sent.partitionKey) &&
    (step.rowKey === undefined || step.rowKey === sent.rowKey)
  );
}

// With TABLEKIT_STORES leaving both services out, vitest.config.ts leaves this file out: no wire to record.
describe.each(services)(
  "the requests on the wire are the plan's, through a proxy in front of %s",
  (_name, service) => {
    let proxy: RecordingProxy;
    let db: TableContext;
    let orders: Repository<Order>;
    const Model = service.model;
    const at = (customer: string, id: number, version = 1): Order => {
      const o = Object.assign(order(customer, id, version), { number: `N${customer}_${id}` });
      if (!service.blobs) o.invoice = undefined;
      return Object.assign(new Model(), o);
    };

    beforeAll(async () => {
      proxy = await startRecordingProxy(service.target());
      db = new TableContext({
        store: AzureStore.fromConnectionString(proxy.connectionString),
        tablePrefix: uniquePrefix(),
        encryption: { keys: localKeys({ k1: randomBytes(32) }, "k1") },
      });
      // It creates the invoices' blob container too (`BlobStore.createContainer`): the first upload,
      // in the first test below, is then one request, as its plan lists it.
      await db.ensureTables(Model);
      orders = db.repository(Model);
    });
    afterAll(async () => {
      await proxy?.close();
    });

    /** Explains (nothing sent), runs, and compares the wire with the plan. */
    async function sendsItsPlan(
      what: string,
      explain: () => { steps: WriteStep[] } | Promise<{ steps: WriteStep[] }>,
      write: () => Promise<unknown>,
    ): Promise<WriteStep[]> {
      proxy.requests.length = 0;
      const { steps } = await explain();
      expect(proxy.requests, `${what}: explaining sends nothing`).toEqual([]);
      await write();
      const seen = proxy.requests.splice(0);
      expect(seen.length, what).toBeGreaterThan(0);
      expectWireIsPlan(seen, steps, what);
      return steps;
    }

    const keyOf = (o: Order) => ({ customer: o.customer, orderId: o.orderId });
    const stored = async (o: Order) => {
      const found = await orders.get(keyOf(o));
      return found ? [found] : [];
    };

    it("single writes: insert, upsert, update, patch (with and without the unique field), delete", async () => {
      const a = at("c1", 1);
      const insert = await sendsItsPlan(
        "insert",
        () => orders.explainWrite("insert", a, { current: [] }),
        () => orders.insert(a),
      );
      expect(insert.find((s) => s.phase === "commit")?.operations?.length).toBe(3);

      const b = at("c1", 2);
      await sendsItsPlan(
        "upsert (not stored)",
        () => orders.explainWrite("upsert", b, { current: [] }),
        () => orders.upsert(b),
      );
      const tracked = (await orders.get(keyOf(b))) as Order;
      Object.assign(tracked, { amount: 77, status: "shipped" });
      await sendsItsPlan(
        "upsert (tracked)",
        () => orders.explainWrite("upsert", tracked, { current: [] }),
        () => orders.upsert(tracked),
      );

      // The status (the same-partition copy's key) and the unique number change.
      const read = (await orders.get(keyOf(a))) as Order;
      Object.assign(read, { status: "shipped", number: "N1b", amount: 15 });
      await sendsItsPlan(
        "update",
        () => orders.explainWrite("update", read, { current: [] }),
        () => orders.update(read),
      );

      // Not read by this context: the row (and its copies) read first, the update conditional on `*`.
      const untracked = Object.assign(at("c1", 1, 3), { number: "N1b" });
      const storedNow = await stored(a);
      await sendsItsPlan(
        "update (untracked)",
        () => orders.explainWrite("update", untracked, { current: storedNow }),
        () => orders.update(untracked, { ifMatch: "*" }),
      );

      const key = keyOf(a);
      const current = await stored(a);
      await sendsItsPlan(
        "patch (unique field)",
        () => orders.explainWrite("patch", { ...key, number: "N1c", amount: 16 }, { current }),
        () => orders.patch(key, { number: "N1c", amount: 16 }),
      );
      const now = await stored(a);
      await sendsItsPlan(
        "patch (not the unique field)",
        () => orders.explainWrite("patch", { ...key, status: "open", amount: 17 }, { current: now }),
        () => orders.patch(key, { status: "open", amount: 17 }),
      );

      const before = await stored(a);
      const deleted = await sendsItsPlan(
        "delete",
        () => orders.explainWrite("delete", key, { current: before }),
        () => orders.delete(key),
      );
      // The row, its same-partition copy and the summary in one $batch.
      expect(deleted.find((s) => s.phase === "commit")?.operations?.length).toBe(3);
      expect(await orders.get(key)).toBeUndefined();
      expect(await db.verifyIndexes(Model)).toEqual({ missing: [], stale: [], orphans: [] });
      expect(await db.verifySummaries(Model)).toEqual([]);
    });

    it("a three-order transaction, a 40-order bulkUpsert and an eventual move", async () => {
      // Three orders of one customer: an insert, an update of a stored one, a delete of a stored one.
      await orders.insert(at("c2", 2));
      await orders.insert(at("c2", 3));
      const second = (await orders.get(keyOf(at("c2", 2)))) as Order;
      const third = (await orders.get(keyOf(at("c2", 3)))) as Order;
      const build = (tx: Transaction) => {
        tx.insert(at("c2", 1));
        tx.update(Object.assign(at("c2", 2, 2), { number: second.number }), { ifMatch: "*" });
        tx.delete(Model, keyOf(third));
      };
      await sendsItsPlan(
        "transaction",
        () => db.explainTransaction(build, { current: [second, third] }),
        () => db.transaction(build),
      );

      // 40 orders of two customers, ten of them stored already.
      const items = Array.from({ length: 40 }, (_, i) => at(`c${3 + (i % 2)}`, 10 + i, 2));
      await orders.bulkUpsert(items.slice(0, 10).map((o) => at(o.customer, Number(o.orderId.slice(1)), 1)));
      const current = (await Promise.all(items.map((o) => orders.get(keyOf(o))))).filter(
        (o): o is Order => o !== undefined,
      );
      expect(current).toHaveLength(10);
      const bulk = await sendsItsPlan(
        "bulkUpsert",
        () => orders.explainBulk("upsert", items, { current }),
        () => orders.bulkUpsert(items),
      );
      expect(bulk.filter((s) => s.request === "transaction").length).toBeGreaterThan(1);

      // One order moved from customer c5 to c6: deleted in one partition, inserted in another.
      // The intents' table is made by the first eventual transaction (a plan cannot know it is missing).
      await db.eventually((tx) => tx.insert(at("c7", 1)));
      await orders.insert(at("c5", 1));
      const moving = (await orders.get(keyOf(at("c5", 1)))) as Order;
      const move = (tx: Parameters<Parameters<TableContext["eventually"]>[0]>[0]) => {
        tx.delete(Model, moving);
        tx.insert(at("c6", 1));
      };
      await sendsItsPlan(
        "eventually",
        () => db.explainEventually(move, { current: [moving] }),
        () => db.eventually(move),
      );
      // Back again, the order named by its key only (its version read before the intent).
      const back = (await orders.get(keyOf(at("c6", 1)))) as Order;
      const returning = (tx: Parameters<Parameters<TableContext["eventually"]>[0]>[0]) => {
        tx.delete(Model, keyOf(back));
        tx.insert(at("c5", 1, 2));
      };
      await sendsItsPlan(
        "eventually (by key)",
        () => db.explainEventually(returning, { current: [back] }),
        () => db.eventually(returning),
      );

      // The bulk's first ten orders deleted (their rows, copies and claims, and the summary rows).
      const gone = items.slice(0, 10).map(keyOf);
      const now = (await Promise.all(gone.map((k) => orders.get(k)))) as Order[];
      await sendsItsPlan(
        "bulkDelete",
        () => orders.explainBulk("delete", gone, { current: now }),
        () => orders.bulkDelete(gone),
      );
      expect(await db.verifyIndexes(Model)).toEqual({ missing: [], stale: [], orphans: [] });
      expect(await db.verifySummaries(Model)).toEqual([]);
    });
  },
);
