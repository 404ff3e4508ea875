import { describe, expect, it } from "vitest";
import { Column, Entity } from "../../src/index.js";
import { unsortedStoreKinds } from "../support/unsorted-stores.js";
import { expiryContext } from "./expiry-fixture.js";

/** No column named `id`: the Cosmos DB Table API reserves that property name. */
@Entity({ table: "ExpVisits", partitionKey: "{user}", rowKey: "v_{num:4}", expiresAt: "until" })
class Visit {
  @Column({ type: "String" }) user!: string;
  @Column({ type: "Int32" }) num!: number;
  @Column({ type: "String" }) page!: string;
  @Column({ type: "DateTime" }) until?: Date;
}

// The Cosmos DB flavour answers unsorted: ordered reads (take, latest) read every page and sort in memory.
describe.each(unsortedStoreKinds.map((kind) => [kind.name, kind] as const))("expiry on %s", (_name, kind) => {
  it("hides expired entities from ordered and projected reads, and sweeps them", async () => {
    const { db, advance } = await expiryContext({ name: "memory", create: kind.create }, [Visit]);
    const visits = db.repository(Visit);
    for (let num = 0; num < 6; num++) {
      const until = num % 2 === 0 ? new Date(10) : undefined;
      await visits.insert(Object.assign(new Visit(), { user: "co", num, page: `p${num}`, until }));
    }
    await advance(10);
    expect((await visits.find({ user: "co" }).take(2).toArray()).map((v) => v.num)).toEqual([1, 3]);
    const projected = await visits.find({ user: "co" }).select("page").take(3).toArray();
    expect(projected.map((v) => v.page)).toEqual(["p1", "p3", "p5"]);
    expect(projected.some((v) => "until" in v)).toBe(false);
    expect(await db.sweepExpired(Visit)).toEqual({ deleted: 3 });
    expect(await db.sweepExpired(Visit)).toEqual({ deleted: 0 });
  });
});
