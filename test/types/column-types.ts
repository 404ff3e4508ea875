// Compiled under both decorator dialects (tsconfig.standard.json and tsconfig.legacy.json):
// `@Column({ type })` accepts exactly the fields whose declared type fits the column type.

import { expectTypeOf } from "vitest";
import {
  Column,
  type ColumnDecorator,
  type ColumnTypeValue,
  type ColumnValueOf,
  Entity,
  type TypedEntityDecorator,
} from "../../src/index.js";

expectTypeOf<ColumnTypeValue<"String">>().toEqualTypeOf<string>();
expectTypeOf<ColumnTypeValue<"Guid">>().toEqualTypeOf<string>();
expectTypeOf<ColumnTypeValue<"Int32">>().toEqualTypeOf<number>();
expectTypeOf<ColumnTypeValue<"Double">>().toEqualTypeOf<number>();
expectTypeOf<ColumnTypeValue<"Int64">>().toEqualTypeOf<bigint>();
expectTypeOf<ColumnTypeValue<"Boolean">>().toEqualTypeOf<boolean>();
expectTypeOf<ColumnTypeValue<"DateTime">>().toEqualTypeOf<Date>();
expectTypeOf<ColumnTypeValue<"Binary">>().toEqualTypeOf<Uint8Array>();
expectTypeOf<ColumnTypeValue<"Json">>().toEqualTypeOf<unknown>();
expectTypeOf<ColumnValueOf<{ type: "Int64"; name: "n" }>>().toEqualTypeOf<bigint>();
expectTypeOf<ColumnValueOf<{ name: "n" }>>().toEqualTypeOf<unknown>();

@Entity({ table: "Fits", partitionKey: "{id}", rowKey: "{n}" })
export class Fits {
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Guid" }) guid!: string;
  @Column({ type: "Int32" }) n!: number;
  @Column({ type: "Double" }) ratio!: number;
  @Column({ type: "Int64" }) big!: bigint;
  @Column({ type: "Boolean" }) flag!: boolean;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "Binary" }) bytes!: Uint8Array;
  @Column({ type: "Binary" }) buffer!: Buffer;
  @Column({ type: "Json" }) anything!: { tags: string[] };
  @Column({ type: "Json" }) list!: number[];
  // Optional, nullable and undefined-able fields fit.
  @Column({ type: "Int32" }) maybe?: number;
  @Column({ type: "String" }) nullable!: string | null;
  @Column({ type: "DateTime" }) either!: Date | null | undefined;
  @Column({ type: "String", name: "Stored" }) renamed!: string;
  // Literal unions fit their base type.
  @Column({ type: "String" }) level!: "low" | "high";
  // Without `type`, any field is accepted (inferred from design:type, or a run-time SchemaError).
  @Column() untyped!: string;
  @Column() untypedNumber!: number;
  @Column({ name: "Other" }) untypedNamed!: Date;
}

@Entity({ table: "Misfits", partitionKey: "{id}", rowKey: "r" })
export class Misfits {
  @Column({ type: "String" }) id!: string;
  // @ts-expect-error Int64 stores a bigint, not a number
  @Column({ type: "Int64" }) big!: number;
  // @ts-expect-error Int32 stores a number
  @Column({ type: "Int32" }) n!: string;
  // @ts-expect-error Double stores a number
  @Column({ type: "Double" }) ratio!: bigint;
  // @ts-expect-error String stores a string
  @Column({ type: "String" }) s!: number;
  // @ts-expect-error Guid stores a string
  @Column({ type: "Guid" }) g!: Uint8Array;
  // @ts-expect-error Boolean stores a boolean
  @Column({ type: "Boolean" }) b!: "yes" | "no";
  // @ts-expect-error DateTime stores a Date
  @Column({ type: "DateTime" }) at!: string;
  // @ts-expect-error Binary stores a Uint8Array
  @Column({ type: "Binary" }) bytes!: string;
  // @ts-expect-error optional does not widen the type: still a number column on a string
  @Column({ type: "Int32" }) maybe?: string;
  // @ts-expect-error a union with a misfit member does not fit
  @Column({ type: "Int32" }) mixed!: number | string;
}

// The decorator types themselves.
expectTypeOf(Column({ type: "Int64" })).toEqualTypeOf<ColumnDecorator<bigint>>();
expectTypeOf(Column()).toEqualTypeOf<ColumnDecorator<unknown>>();
expectTypeOf(Entity<Fits>({ table: "Fits", partitionKey: "{id}", rowKey: "{n}" })).toEqualTypeOf<
  TypedEntityDecorator<Fits>
>();
