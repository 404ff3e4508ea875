/**
 * A transaction's summary stages and large values described from data alone (issue 30: no plan is
 * described from a stage that sends): `describeSummaryStage` from a `SummaryStagePlan` (its writes, the
 * partition it mirrors, which summary rows are cached), and the large-value steps from `LargeWrite`s.
 * Each expected request is derived here by hand from the rules: a summary delta reads the row a write
 * replaces unless the write carries it at the version it is conditional on; a summary row not cached is
 * read; a summary kept elsewhere adds an intent before and its contribution after; a replacing write
 * reads the references first, uploads each value, and removes the blobs its row no longer points at.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity } from "../../src/index.js";
import type { CompanionWrite } from "../../src/repository/core/group-companion.js";
import type { PlannedOperation } from "../../src/repository/facade/transaction.js";
import {
  largeReads,
  largeRemovals,
  largeUploads,
  planLargeWrites,
} from "../../src/repository/facade/transaction-large.js";
import { describeSummaryStage, planSummaryStage } from "../../src/repository/summary/summary-description.js";
import { type EntityModel, getEntityModel } from "../../src/schema/entity-model.js";
import type { TransactionAction } from "../../src/store/table-store.js";

@Entity({
  table: "DescSales",
  partitionKey: "{region}",
  rowKey: "{id}",
  summaries: {
    local: { rowKey: "summary", count: "n" },
    perRegion: { partitionKey: "{region}", rowKey: "region", table: "DescStats", count: "n" },
  },
})
class Sale {
  @Column({ type: "String" }) region!: string;
  @Column({ type: "String" }) id!: string;
}

@Entity({ table: "DescDocs", partitionKey: "{folder}", rowKey: "{id}" })
class Doc {
  @Column({ type: "String" }) folder!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String", large: true }) body?: string;
  @Column({ type: "Json", large: true }) meta?: { tags: string[] };
}

const naming = { tableName: (table: string) => `x${table}` };
const sales = getEntityModel(Sale) as EntityModel<object>;
const docs = getEntityModel(Doc) as EntityModel<object>;
const write = (rowKey: string, condition?: string, before?: string): CompanionWrite => ({
  partitionKey: "north",
  rowKey,
  condition,
  before: before === undefined ? undefined : { partitionKey: "north", rowKey, etag: before },
  after: undefined,
});

describe("a summary stage described from its plan", () => {
  // The local row of the remote summary is hidden (`~tksum~perRegion`); the plain one is `summary`.
  const localRow = "summary";
  const hiddenRow = "~tksum~perRegion";
  // Where the partition's contribution to the remote summary is kept (`region~<source partition>`).
  const contribution = { table: "xDescStats", partitionKey: "north", rowKey: "region~north" };

  it("reads each row it replaces unless carried at its version, and each summary row not cached", () => {
    const writes = [write("a"), write("b", 'W/"1"', 'W/"1"'), write("c", 'W/"2"', 'W/"1"')];
    const plan = planSummaryStage(sales, naming, "xDescSales", writes, [true, false]);
    const described = describeSummaryStage(plan, naming);
    expect(described.before).toEqual([{ request: "insert summary intent", table: "xTablekitIntents" }]);
    // The reads of its first round are its own list: a plan puts them after every stage's before-steps.
    expect(described.reads).toEqual([
      {
        request: "get (row before, for the summary delta)",
        table: "xDescSales",
        partitionKey: "north",
        rowKey: "c",
      },
      { request: "get (summary perRegion)", table: "xDescSales", partitionKey: "north", rowKey: hiddenRow },
    ]);
    expect(described.operations).toEqual([
      // The cached row replaced on its ETag; the one read replaced too: entities of the partition are
      // stored (b and c are conditional on their versions), so the summary rows that count them are.
      { kind: "update summary (local)", rowKey: localRow },
      { kind: "update summary (perRegion)", rowKey: hiddenRow },
    ]);
    // Its contribution is not cached: read, then replaced (it is stored for the same reason).
    expect(described.after).toEqual([
      { request: "get contribution (perRegion)", ...contribution },
      { request: "replace contribution (perRegion)", ...contribution },
      { request: "delete summary intent", table: "xTablekitIntents" },
    ]);
  });

  it("assumes an uncached summary row and contribution absent when no entity of the partition is stored", () => {
    // Only an insert: nothing of the partition is known to be stored, so what is read is assumed absent.
    const plan = planSummaryStage(sales, naming, "xDescSales", [write("a")], [true, false]);
    const described = describeSummaryStage(plan, naming);
    expect(described.operations).toEqual([
      { kind: "update summary (local)", rowKey: localRow },
      { kind: "insert summary (perRegion)", rowKey: hiddenRow },
    ]);
    expect(described.after).toEqual([
      { request: "get contribution (perRegion)", ...contribution },
      { request: "insert contribution (perRegion)", ...contribution },
      { request: "delete summary intent", table: "xTablekitIntents" },
    ]);
  });

  it("replaces a contribution the scope's cache holds, on its ETag, with no read", () => {
    const plan = planSummaryStage(sales, naming, "xDescSales", [write("a")], [true, true]);
    const described = describeSummaryStage({ ...plan, mirrored: [true] }, naming);
    expect(described.after).toEqual([
      { request: "replace contribution (perRegion)", ...contribution },
      { request: "delete summary intent", table: "xTablekitIntents" },
    ]);
  });

  it("reads every summary row when none is cached", () => {
    const plan = planSummaryStage(sales, naming, "xDescSales", [write("a")], [false, false]);
    const described = describeSummaryStage(plan, naming);
    expect(described.before.map((step) => step.request)).toEqual(["insert summary intent"]);
    expect(described.reads.map((step) => step.request)).toEqual([
      "get (summary local)",
      "get (summary perRegion)",
    ]);
  });
});

describe("a transaction's large values described from data", () => {
  const operation = (kind: "insert" | "upsert" | "delete", id: string, entity?: object): PlannedOperation => {
    const wire = { partitionKey: "f", rowKey: id };
    const action: TransactionAction =
      kind === "delete"
        ? { kind, ...wire, ifMatch: "*" }
        : kind === "insert"
          ? { kind, entity: { ...wire } }
          : { kind, entity: { ...wire }, mode: "replace" };
    return { table: "DescDocs", action, partitionKey: "f", rowKey: id, entity, describe: id, model: docs };
  };
  /** The row an operation sends. */
  const sent = (operation: PlannedOperation | undefined): Record<string, unknown> =>
    (operation?.action as { entity?: Record<string, unknown> } | undefined)?.entity ?? {};
  const backend = { store: "memory", blobs: true, canSeal: false };

  it("uploads each value, reads the references of a replaced row, removes the blobs it no longer points at", () => {
    const operations = [
      operation("insert", "1", { folder: "f", id: "1", body: "hello" }),
      operation("upsert", "2", { folder: "f", id: "2", meta: { tags: [] } }),
      operation("delete", "3"),
    ];
    const writes = planLargeWrites("xDescDocs", operations, backend);
    const container = "tablekit-xdescdocs";
    expect(largeUploads(writes)).toEqual([
      { request: "putBlob (body)", table: container },
      { request: "putBlob (meta)", table: container },
    ]);
    expect(largeReads(writes)).toEqual([
      { request: "get (large references)", table: "xDescDocs", partitionKey: "f", rowKey: "2" },
      { request: "get (large references)", table: "xDescDocs", partitionKey: "f", rowKey: "3" },
    ]);
    // The upsert's stored row held both values (it keeps `meta` under a new blob, drops `body`); the
    // deleted row held `body`.
    const stored = (op: PlannedOperation) =>
      op.rowKey === "2"
        ? { body: "old", meta: { tags: ["old"] } }
        : op.rowKey === "3"
          ? { body: "x" }
          : undefined;
    expect(largeRemovals(writes, stored)).toEqual([
      { request: "deleteBlob (replaced body)", table: container },
      { request: "deleteBlob (replaced meta)", table: container },
      { request: "deleteBlob (replaced body)", table: container },
    ]);
    // The rows point at the uploads: the insert's body and the upsert's meta.
    expect(String(sent(operations[0]).body)).toMatch(/^tkblob1:5:/);
    expect(String(sent(operations[1]).meta)).toMatch(/^tkblob1:\d+:/);
    expect(sent(operations[1]).body).toBeUndefined();
  });

  it("refuses large values on a store without blobs before any request", () => {
    const operations = [operation("insert", "1", { folder: "f", id: "1", body: "hello" })];
    expect(() => planLargeWrites("xDescDocs", operations, { ...backend, blobs: false })).toThrow(
      /Doc has large columns \(body, meta\), but the store 'memory' has no blob endpoint/,
    );
  });
});
