/**
 * Summaries on a table per period: each period's table keeps a summary row per partition, written in
 * the same transaction as the entity (the period's table is created on first write, as for any write).
 * Expected values are recounted here from what the test wrote.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, ValidationError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";

@Entity({
  table: "SumHits{at:month}",
  partitionKey: "{site}",
  rowKey: "hit_{at:ticks}_{id}",
  summaries: { perSite: { rowKey: "summary", count: "hits", sum: { bytes: "totalBytes" } } },
})
class Hit {
  @Column({ type: "String" }) site!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) bytes!: number;
}

const hit = (site: string, iso: string, id: string, bytes: number) =>
  Object.assign(new Hit(), { site, at: new Date(iso), id, bytes });

const NOV = new Date("2026-11-10T00:00:00Z");
const DEC = new Date("2026-12-10T00:00:00Z");

describe.each(stores)("summaries on a table per period on %s", (_name, kind) => {
  it("each period's table keeps its own summary per partition, exact through every kind of write", async () => {
    const { db } = await freshContext(kind, [Hit]);
    const repo = db.repository(Hit);
    await repo.insert(hit("web", "2026-11-01T10:00:00Z", "a", 100));
    await repo.insert(hit("web", "2026-11-02T10:00:00Z", "b", 200));
    await repo.insert(hit("api", "2026-11-03T10:00:00Z", "c", 5));
    await repo.upsert(hit("web", "2026-12-01T10:00:00Z", "d", 7));
    const b = await repo.getOrThrow({ site: "web", at: new Date("2026-11-02T10:00:00Z"), id: "b" });
    b.bytes = 250;
    await repo.update(b);
    expect(await repo.delete({ site: "web", at: new Date("2026-11-01T10:00:00Z"), id: "a" })).toBe(true);
    const bulk = Array.from({ length: 30 }, (_, i) =>
      hit("web", `2026-${i % 2 ? "11" : "12"}-05T00:00:${String(i).padStart(2, "0")}Z`, `x${i}`, i),
    );
    expect(await repo.bulkInsert(bulk)).toMatchObject({ written: 30, failed: [] });

    const odd = bulk.filter((_, i) => i % 2 === 1);
    const even = bulk.filter((_, i) => i % 2 === 0);
    expect(await repo.summary("perSite", { site: "web", at: NOV })).toEqual({
      hits: 1 + odd.length,
      totalBytes: 250 + odd.reduce((s, h) => s + h.bytes, 0),
    });
    expect(await repo.period(DEC).summary("perSite", { site: "web" })).toEqual({
      hits: 1 + even.length,
      totalBytes: 7 + even.reduce((s, h) => s + h.bytes, 0),
    });
    expect(await repo.period(NOV).summary("perSite", { site: "api" })).toEqual({ hits: 1, totalBytes: 5 });
    // A period nobody wrote to: zeros, no table needed.
    expect(await repo.summary("perSite", { site: "web", at: new Date("2027-03-01T00:00:00Z") })).toEqual({
      hits: 0,
      totalBytes: 0,
    });
    expect(await db.verifySummaries(Hit)).toEqual([]);
    expect(await db.repairSummaries(Hit)).toEqual([]);
    expect(await repo.period(NOV).find({ site: "web" }).toArray()).toHaveLength(1 + odd.length);
  });

  it("verifySummaries names the period's table of a drifting row; repairSummaries corrects it", async () => {
    const { db, counter } = await freshContext(kind, [Hit]);
    const repo = db.repository(Hit);
    await repo.insert(hit("web", "2026-11-01T10:00:00Z", "a", 100));
    await repo.insert(hit("web", "2026-12-01T10:00:00Z", "b", 20));
    const [november] = await db.tablesOf(Hit);
    const row = (await counter.queryPage(november as string, {})).items.find((r) =>
      r.rowKey.startsWith("hit_"),
    );
    // Deleted around the repository: the summary still counts it.
    await counter.delete(november as string, "web", row?.rowKey as string, "*");
    const drift = [
      {
        summary: "perSite",
        table: november,
        partitionKey: "web",
        rowKey: "summary",
        stored: { hits: 1, totalBytes: 100 },
        actual: { hits: 0, totalBytes: 0 },
      },
    ];
    expect(await db.verifySummaries(Hit)).toEqual(drift);
    expect(await db.repairSummaries(Hit)).toEqual(drift);
    expect(await db.verifySummaries(Hit)).toEqual([]);
    expect(await repo.summary("perSite", { site: "web", at: DEC })).toEqual({ hits: 1, totalBytes: 20 });
  });

  it("summary() without the period field is a ValidationError", async () => {
    const { db } = await freshContext(kind, [Hit]);
    await expect(db.repository(Hit).summary("perSite", { site: "web" })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });
});
