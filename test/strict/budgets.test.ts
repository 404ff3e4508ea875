/**
 * The service's 255 properties and 1 MiB per entity count tablekit's own properties too (`EntityType`,
 * `_tkIndexKeys` on an indexed entity's row; `EntityType`, `_tkIndex`, `_tkSourcePK`, `_tkSourceRK`, `_tkStamp`
 * on each index copy). A definition whose rows can exceed the property budget is a `SchemaError`; a
 * row over 1 MiB as sent (copies included) is a `ValidationError` before any request. Nothing of it
 * ever reaches the service to be refused there.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, SchemaError, TableContext, ValidationError } from "../../src/index.js";
import { getEntityModel } from "../../src/schema/entity-model.js";
import { CountingStore } from "../support/counting-store.js";
import { expectRejection, failureOf } from "../support/rejection.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";

/** An indexed class with `properties` column properties: id, email and a series for the rest. */
function indexedClass(properties: number) {
  @Entity({
    table: "StrictBudget",
    partitionKey: "{id}",
    rowKey: "row",
    indexes: {
      byEmail: { rowKey: "email_{email}" },
      elsewhere: { table: "StrictBudgetIdx", partitionKey: "{email}", rowKey: "{id}" },
    },
  })
  class Wide {
    @Column({ type: "String" }) id!: string;
    @Column({ type: "String" }) email!: string;
    @Column({ type: "Int32", series: properties - 2 }) values!: number[];
  }
  return Wide;
}

describe.each(storeKinds.map((k) => [k.name, k] as const))(
  "property and size budgets on %s",
  (_name, kind) => {
    it("indexed classes of 240 to 252 column properties: refused at definition, or written and read back", async () => {
      const outcomes: string[] = [];
      for (let properties = 240; properties <= 252; properties++) {
        let Wide: ReturnType<typeof indexedClass>;
        try {
          Wide = indexedClass(properties);
          getEntityModel(Wide);
        } catch (error) {
          expect(error).toBeInstanceOf(SchemaError);
          // The message names the budget and tablekit's own properties.
          expect((error as Error).message).toMatch(/255 properties .*PartitionKey, RowKey and Timestamp/);
          expect((error as Error).message).toMatch(/_tk|EntityType/);
          outcomes.push(`${properties}:schema`);
          continue;
        }
        const db = new TableContext({ store: kind.create(), tablePrefix: uniquePrefix() });
        await db.ensureTables(Wide);
        const entity = Object.assign(new Wide(), {
          id: `u${properties}`,
          email: `u${properties}@x`,
          values: Array.from({ length: properties - 2 }, (_, i) => i),
        });
        await db.repository(Wide).insert(entity);
        const back = await db.repository(Wide).get({ id: entity.id });
        expect(back?.values).toHaveLength(properties - 2);
        outcomes.push(`${properties}:ok`);
      }
      // Copies hold the columns and 5 of tablekit's properties: 247 + 5 = 252 is the largest that fits.
      expect(outcomes).toEqual([
        ...Array.from({ length: 8 }, (_, i) => `${240 + i}:ok`),
        ...Array.from({ length: 5 }, (_, i) => `${248 + i}:schema`),
      ]);
    });

    it("1 MiB boundary with an index: a row over 1 MiB as sent (copy bookkeeping included) is refused before any request", async () => {
      @Entity({
        table: "StrictSize",
        partitionKey: "{id}",
        rowKey: "row",
        indexes: { elsewhere: { table: "StrictSizeIdx", partitionKey: "{email}", rowKey: "{id}" } },
      })
      class Sized {
        @Column({ type: "String" }) id!: string;
        @Column({ type: "String" }) email!: string;
        @Column({ type: "String", series: 40 }) text!: string[];
      }
      const counter = new CountingStore(kind.create());
      const db = new TableContext({ store: counter, tablePrefix: uniquePrefix() });
      await db.ensureTables(Sized);
      const make = (id: string, fill: number) =>
        Object.assign(new Sized(), {
          id,
          email: "e".repeat(500),
          // 40 strings of up to 32,000 characters: `fill` UTF-16 units in all.
          text: Array.from({ length: 40 }, (_, i) =>
            "t".repeat(Math.max(0, Math.min(32_000, fill - i * 32_000))),
          ),
        });
      // Sweep the last bytes below 1 MiB (each character is 2 bytes by the service's formula): every
      // write either succeeds or is a ValidationError before any request; the largest that succeeds
      // leaves less room than the copy's bookkeeping needs, so the entity row alone would have fit.
      const outcomes: Array<"ok" | "refused"> = [];
      for (let fill = 520_000; fill <= 524_288; fill += 512) {
        counter.reset();
        const error = await failureOf(() => db.repository(Sized).insert(make(`s${fill}`, fill))).catch(
          () => undefined,
        );
        if (error === undefined) {
          outcomes.push("ok");
          continue;
        }
        expect(error).toBeInstanceOf(ValidationError);
        expect(error.message).toMatch(/1 MiB/);
        expect(counter.calls.insert + counter.calls.upsert + counter.calls.submitTransaction).toBe(0);
        outcomes.push("refused");
      }
      expect(outcomes).toContain("ok");
      expect(outcomes).toContain("refused");
      // Monotone: once refused, every larger one is refused too.
      expect(outcomes.slice(outcomes.indexOf("refused")).every((o) => o === "refused")).toBe(true);
    });

    it("an entity row over the budget by its bookkeeping alone: 251 columns on an indexed class is a SchemaError", () => {
      const error = (() => {
        try {
          getEntityModel(indexedClass(251));
        } catch (e) {
          return e as Error;
        }
        throw new Error("expected a SchemaError");
      })();
      expect(error).toBeInstanceOf(SchemaError);
      expect(error.message).toMatch(/_tkIndexKeys|_tkSourcePK/);
    });

    it("a row refused by the property budget names it, before any request", async () => {
      const counter = new CountingStore(kind.create());
      const db = new TableContext({ store: counter, tablePrefix: uniquePrefix() });
      // No table: the row is refused before any request would need one.
      const Dynamic = db.dynamic("StrictBudgetDyn");
      const row: Record<string, unknown> = { partitionKey: "p", rowKey: "r" };
      for (let i = 0; i < 253; i++) row[`c${i}`] = i;
      counter.reset();
      await expectRejection(
        Promise.resolve().then(() => Dynamic.upsert(row as never)),
        ValidationError,
      );
      expect(counter.requests).toBe(0);
    });
  },
);
