/**
 * Double columns store NaN, Infinity and -Infinity, as the service does (on the wire: the strings
 * "NaN", "Infinity", "-Infinity" with an Edm.Double annotation), on every store.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext } from "../../src/index.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";

@Entity({ table: "StrictDoubles", partitionKey: "{id}", rowKey: "r" })
class Measure {
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Double" }) value!: number;
}

describe.each(storeKinds.map((k) => [k.name, k] as const))("non-finite doubles on %s", (_name, kind) => {
  it("NaN, Infinity and -Infinity round-trip through insert, get, a query and a transaction", async () => {
    const db = new TableContext({ store: kind.create(), tablePrefix: uniquePrefix() });
    await db.ensureTables(Measure);
    const measures = db.repository(Measure);
    const values = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1.5];
    for (const [i, value] of values.entries()) {
      await measures.insert(Object.assign(new Measure(), { id: `m${i}`, value }));
      expect((await measures.get({ id: `m${i}` }))?.value).toBe(value);
    }
    const scanned = await measures.scan().toArray();
    expect(scanned.map((m) => m.value)).toEqual(values);
    await db.transaction((tx) => {
      tx.upsert(Object.assign(new Measure(), { id: "m0", value: Number.NEGATIVE_INFINITY }));
    });
    expect((await measures.get({ id: "m0" }))?.value).toBe(Number.NEGATIVE_INFINITY);
  });
});
