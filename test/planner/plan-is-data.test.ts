/**
 * Issue 30: no plan holds a closure. Every plan a single write runs (`runPlan`: the entity's plan run
 * by `EntityPlanRun`, the large-value stage's around it run by its own executor) is recorded as it is
 * handed to its executor; each is data (no function anywhere in it, `structuredClone` copies it), and
 * the entity's plan renders as the steps `explainWrite` listed for the same write, from the same state.
 * The store does not matter here (the plan values are compared, not the wire: plan-requests.test.ts).
 */
import { describe, expect, it, vi } from "vitest";
import {
  Column,
  Entity,
  MemoryStore,
  type Repository,
  TableContext,
  type WriteStep,
} from "../../src/index.js";
import type { RenderablePlan } from "../../src/repository/core/write-plan.js";
import { uniquePrefix } from "../fixtures/context.js";

/** The plans handed to `runPlan`, in order (the real `runPlan` runs each). */
const ran: RenderablePlan[] = [];

vi.mock("../../src/repository/core/write-plan.js", async (original) => {
  const real = await original<typeof import("../../src/repository/core/write-plan.js")>();
  return {
    ...real,
    runPlan: (plan: RenderablePlan, executor: Parameters<typeof real.runPlan>[1]) => {
      ran.push(plan);
      return real.runPlan(plan as Parameters<typeof real.runPlan>[0], executor);
    },
  };
});

const { renderPlan } = await import("../../src/repository/core/write-plan.js");

/** Every feature a single write plans: an index in the partition, one elsewhere, a unique one in another table, a summary, a large value. */
@Entity({
  table: "DataPlans",
  partitionKey: "{group}",
  rowKey: "item_{id}",
  indexes: {
    byStatus: { rowKey: "status_{status}_{id}" },
    byTag: { partitionKey: "tag_{tag}", rowKey: "{group}_{id}", unique: false },
    byCode: { table: "DataPlanCodes", partitionKey: "c", rowKey: "{code}", unique: true },
  },
  summaries: { perGroup: { rowKey: "summary", count: "items", sum: { n: "total" } } },
})
class Item {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) status!: string;
  @Column({ type: "String" }) tag!: string;
  @Column({ type: "String" }) code!: string;
  @Column({ type: "Int32" }) n!: number;
  @Column({ type: "Binary", large: true }) body?: Uint8Array;
}

function item(version: number): Item {
  return Object.assign(new Item(), {
    group: "g",
    id: "1",
    status: version % 2 === 0 ? "shipped" : "open",
    tag: `t${version}`,
    code: `C${version}`,
    n: version,
    body: Uint8Array.from({ length: 64 }, (_, i) => (i + version) % 256),
  });
}

/** The paths in `value` that hold a function, or an object no plan is made of (a class instance). */
function nonData(value: unknown, path = "plan", seen = new Set<unknown>()): string[] {
  if (typeof value === "function") return [path];
  if (value === null || typeof value !== "object" || seen.has(value)) return [];
  seen.add(value);
  if (ArrayBuffer.isView(value) || value instanceof Date) return [];
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== Array.prototype && proto !== null)
    return [`${path} (${proto?.constructor?.name ?? "?"})`];
  return Object.entries(value).flatMap(([key, inner]) => nonData(inner, `${path}.${key}`, seen));
}

/** The rendered steps of `plan`, as `explainWrite` renders them. */
function rendered(plan: RenderablePlan): WriteStep[] {
  return renderPlan(plan).steps as WriteStep[];
}

/** True when `part` is a run of consecutive steps of `whole`. */
function holdsRun(whole: readonly WriteStep[], part: readonly WriteStep[]): boolean {
  const text = JSON.stringify;
  for (let at = 0; at + part.length <= whole.length; at++)
    if (part.every((step, i) => text(step) === text(whole[at + i]))) return true;
  return false;
}

/** Explains a write, sends it, and checks the plans it ran: data, and the entity's as explained. */
async function expectRunsData(explain: () => WriteStep[], write: () => Promise<unknown>, what: string) {
  const explained = explain();
  ran.length = 0;
  await write();
  // The large stage's plan around the entity's: both ran, both data.
  expect(ran.length, what).toBeGreaterThanOrEqual(2);
  for (const plan of ran) {
    expect(nonData(plan), what).toEqual([]);
    expect(() => structuredClone(plan), what).not.toThrow();
  }
  // The entity's plan (the last one run: the large stage's commit runs it) is what was explained.
  const entity = ran.at(-1) as RenderablePlan;
  const steps = rendered(entity);
  expect(
    steps.filter((s) => s.phase === "commit"),
    what,
  ).toHaveLength(1);
  expect(
    holdsRun(explained, steps),
    `${what}: ran ${JSON.stringify(steps)}, explained ${JSON.stringify(explained)}`,
  ).toBe(true);
  // And the large stage's before-steps lead the explained plan.
  const large = rendered(ran[0] as RenderablePlan).filter((s) => s.phase === "before");
  expect(explained.slice(0, large.length), what).toEqual(large);
  return steps;
}

describe("a single write's plan is data", () => {
  it("insert, upsert, update, patch and delete run plans without a function, rendered as explained", async () => {
    const db = new TableContext({ store: new MemoryStore(), tablePrefix: uniquePrefix() });
    await db.ensureTables(Item);
    const items: Repository<Item> = db.repository(Item);
    const key = { group: "g", id: "1" };

    const first = item(1);
    const inserted = await expectRunsData(
      () => items.explainWrite("insert", first, {}).steps,
      () => items.insert(first),
      "insert",
    );
    // The insert claims its unique value and writes its copy elsewhere: the protocol's steps ran as data.
    expect(inserted.map((s) => s.request)).toEqual(
      expect.arrayContaining(["insert intent", "claim (byCode)", "upsert copy (byTag)", "transaction"]),
    );

    const stored = (await items.get(key)) as Item;
    Object.assign(stored, item(2));
    await expectRunsData(
      () => items.explainWrite("upsert", stored, {}).steps,
      () => items.upsert(stored),
      "upsert (tracked)",
    );

    const tracked = (await items.get(key)) as Item;
    Object.assign(tracked, item(3));
    await expectRunsData(
      () => items.explainWrite("update", tracked, {}).steps,
      () => items.update(tracked),
      "update (tracked)",
    );

    const current = (await items.get(key)) as Item;
    const changes = { status: "shipped", n: 40 };
    await expectRunsData(
      () => items.explainWrite("patch", { ...key, ...changes }, { current: [current] }).steps,
      () => items.patch(key, changes),
      "patch",
    );

    const last = (await items.get(key)) as Item;
    const deleted = await expectRunsData(
      () => items.explainWrite("delete", last, {}).steps,
      () => items.delete(last),
      "delete (tracked)",
    );
    expect(deleted.map((s) => s.request)).toEqual(expect.arrayContaining(["delete copy (byCode)"]));
    expect(await items.get(key)).toBeUndefined();
  });
});
