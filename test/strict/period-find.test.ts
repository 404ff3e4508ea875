/**
 * Reads take the period field like a key field: `find({ …, at })` on an entity with a table per
 * period reads that period's table, as `get` does, also when `at` is not part of the keys.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext } from "../../src/index.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";

@Entity({ table: "StrictInvoices{at:month}", partitionKey: "{customer}", rowKey: "{id}" })
class Invoice {
  @Column({ type: "String" }) customer!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "DateTime" }) at!: Date;
}

const invoice = (id: string, iso: string) =>
  Object.assign(new Invoice(), { customer: "c", id, at: new Date(iso) });

describe.each(storeKinds.map((k) => [k.name, k] as const))(
  "find with the period field on %s",
  (_name, kind) => {
    it("routes to the period's table like get, whether or not the period field is a key field", async () => {
      const db = new TableContext({ store: kind.create(), tablePrefix: uniquePrefix() });
      const invoices = db.repository(Invoice);
      await invoices.insert(invoice("1", "2026-03-05T00:00:00Z"));
      await invoices.insert(invoice("2", "2026-03-20T00:00:00Z"));
      await invoices.insert(invoice("3", "2026-04-01T00:00:00Z"));
      const march = await invoices.find({ customer: "c", at: new Date("2026-03-31T00:00:00Z") }).toArray();
      expect(march.map((i) => i.id)).toEqual(["1", "2"]);
      const one = await invoices
        .find({ customer: "c", id: "3", at: new Date("2026-04-15T00:00:00Z") })
        .toArray();
      expect(one.map((i) => i.id)).toEqual(["3"]);
      expect(await invoices.find({ customer: "c", at: new Date("2026-05-01T00:00:00Z") }).toArray()).toEqual(
        [],
      );
      expect((await invoices.get({ customer: "c", id: "2", at: new Date("2026-03-01T00:00:00Z") }))?.id).toBe(
        "2",
      );
    });
  },
);
