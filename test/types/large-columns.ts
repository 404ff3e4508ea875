// Compiled under both decorator dialects: `large: true` fits Binary, Json and String columns only.

import { Column, Entity } from "../../src/index.js";

@Entity({ table: "LargeTypes", partitionKey: "{id}", rowKey: "" })
export class LargeTypes {
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Binary", large: true }) bytes!: Uint8Array;
  @Column({ type: "Json", large: true }) doc!: { items: string[] };
  @Column({ type: "String", large: true }) text?: string;
  @Column({ type: "String", large: false }) small!: string;
  // @ts-expect-error an Int32 column cannot be large
  @Column({ type: "Int32", large: true }) count!: number;
  // @ts-expect-error a DateTime column cannot be large
  @Column({ type: "DateTime", large: true }) at!: Date;
  // @ts-expect-error the field type must still fit the column type
  @Column({ type: "Binary", large: true }) wrong!: string;
}
