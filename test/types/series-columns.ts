// Data series (`@Column({ type, series })`): the field is an array of the column type's values,
// and `patch` takes single slots. Compiled under both decorator dialects.

import { expectTypeOf } from "vitest";
import {
  Column,
  type ColumnValueOf,
  Entity,
  MemoryStore,
  type PatchChanges,
  TableContext,
} from "../../src/index.js";

expectTypeOf<ColumnValueOf<{ type: "Int32"; series: 24 }>>().toEqualTypeOf<readonly (number | undefined)[]>();
expectTypeOf<ColumnValueOf<{ type: "DateTime"; series: 3; name: "at" }>>().toEqualTypeOf<
  readonly (Date | undefined)[]
>();

@Entity({ table: "Meters", partitionKey: "{meter}", rowKey: "{day}" })
export class Meter {
  @Column({ type: "String" }) meter!: string;
  @Column({ type: "String" }) day!: string;
  @Column({ type: "Int32", series: 24 }) hourly!: Array<number | undefined>;
  // Plain, readonly and optional arrays fit too.
  @Column({ type: "Double", series: 4 }) quarters!: number[];
  @Column({ type: "Boolean", series: 7 }) weekdays?: readonly boolean[];
  @Column({ type: "String", series: 3, name: "tag" }) tags!: Array<string | undefined> | null;
  @Column({ type: "Int32" }) total!: number;
}

@Entity({ table: "BadMeters", partitionKey: "{meter}", rowKey: "r" })
export class BadMeter {
  @Column({ type: "String" }) meter!: string;
  // @ts-expect-error a series is an array, not one value
  @Column({ type: "Int32", series: 24 }) one!: number;
  // @ts-expect-error the slots are Int32 numbers, not strings
  @Column({ type: "Int32", series: 24 }) strings!: string[];
  // @ts-expect-error an Int64 series holds bigints
  @Column({ type: "Int64", series: 2 }) big!: number[];
}

const meters = new TableContext({ store: new MemoryStore() }).repository(Meter);
const key = { meter: "m1", day: "20261126" };

// patch: a series takes single slots by number, or the whole array.
meters.patch(key, { hourly: { 13: 5 } });
meters.patch(key, { hourly: { 0: 1, 23: undefined }, total: 6 });
meters.patch(key, { hourly: [1, undefined, 3] });
meters.patch(key, { weekdays: { 6: true } });
meters.patch(key, { tags: { 2: "x" } });
// @ts-expect-error slot values have the column's type
meters.patch(key, { hourly: { 13: "five" } });
// @ts-expect-error slots are numbered
meters.patch(key, { hourly: { noon: 5 } });
// @ts-expect-error a scalar column takes its value, not slots
meters.patch(key, { total: { 0: 5 } });
expectTypeOf<PatchChanges<Meter>["hourly"]>().toEqualTypeOf<
  Array<number | undefined> | { readonly [slot: number]: number | undefined } | undefined
>();

// Reads give the array back.
expectTypeOf(meters.get(key)).resolves.toEqualTypeOf<Meter | undefined>();
meters.find({ meter: "m1" }).select("hourly");
