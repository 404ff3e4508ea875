/**
 * A write explained in a context that has cached none of its partition's summary rows (a fresh process,
 * or another context): the entity given as stored means the summary rows that count it are stored too,
 * so the plan reads each one and replaces it on its ETag, as the write then sends. With nothing of the
 * partition given, a plan assumes what it reads absent, and the first write inserts the rows.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext } from "../../src/index.js";
import { blobStores, uniquePrefix } from "../fixtures/context.js";
import { RecordingStore } from "../support/recording-store.js";
import { expectSentAsExplained } from "./plan-compare.js";

@Entity({
  table: "ColdSales",
  partitionKey: "{region}",
  rowKey: "sale_{id}",
  summaries: {
    local: { rowKey: "summary", count: "sales", sum: { amount: "total" } },
    perRegion: { partitionKey: "{region}", rowKey: "region", table: "ColdStats", count: "sales" },
  },
})
class Sale {
  @Column({ type: "String" }) region!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) amount!: number;
}

const sale = (id: string, amount: number) => Object.assign(new Sale(), { region: "north", id, amount });

/** The commit step's operations of a plan, as `RecordingStore.batchOperations` words what is sent. */
function plannedBatch(steps: ReadonlyArray<{ phase: string; operations?: ReadonlyArray<{ kind: string }> }>) {
  return steps.find((step) => step.phase === "commit")?.operations?.map((operation) => operation.kind) ?? [];
}

describe.each(blobStores)("a plan made with no summary row cached, on %s", (_name, kind) => {
  it("replaces the summary rows and the contribution of a partition whose entity is given as stored", async () => {
    const backend = kind.create();
    const prefix = uniquePrefix();
    const first = new TableContext({ store: backend, tablePrefix: prefix });
    await first.ensureTables(Sale);
    const seeded = first.repository(Sale);
    await seeded.insert(sale("1", 5));
    await seeded.insert(sale("2", 7));

    // Another context on the same tables: its scope has cached nothing of them.
    const store = new RecordingStore(backend);
    const repo = new TableContext({ store, tablePrefix: prefix }).repository(Sale);
    const stored = (await repo.get({ region: "north", id: "1" })) as Sale;
    const key = { region: "north", id: "1" };
    const steps = await expectSentAsExplained(
      store,
      async () => repo.explainWrite("delete", key, { current: [stored] }),
      () => repo.delete(key),
      "delete, cold",
    );
    expect(plannedBatch(steps)).toEqual(["delete", "update summary (local)", "update summary (perRegion)"]);
    // As sent: the summary rows replaced on the ETags read (the entity's delete on the version given).
    expect(store.batchOperations.at(-1)).toEqual([
      "delete if sale_1",
      "update if summary",
      "update if ~tksum~perRegion",
    ]);
    // The contribution elsewhere: read, then replaced (a `replace` step is a conditional update).
    expect(steps.filter((step) => step.request.includes("contribution")).map((step) => step.request)).toEqual(
      ["get contribution (perRegion)", "replace contribution (perRegion)"],
    );
    expect(await repo.summary("local", { region: "north" })).toEqual({ sales: 1, total: 7 });
  });

  it("inserts them for the first entity of a partition, when nothing of it is given", async () => {
    const store = new RecordingStore(kind.create());
    const db = new TableContext({ store, tablePrefix: uniquePrefix() });
    await db.ensureTables(Sale);
    const repo = db.repository(Sale);
    const steps = await expectSentAsExplained(
      store,
      async () => repo.explainWrite("insert", sale("1", 5)),
      () => repo.insert(sale("1", 5)),
      "insert, cold",
    );
    expect(plannedBatch(steps)).toEqual(["insert", "insert summary (local)", "insert summary (perRegion)"]);
    expect(store.batchOperations.at(-1)).toEqual([
      "insert sale_1",
      "insert summary",
      "insert ~tksum~perRegion",
    ]);
  });
});
