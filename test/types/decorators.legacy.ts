// TypeScript's experimentalDecorators only (tsconfig.legacy.json): the decorators' legacy call shape.
import { Column, Entity } from "../../src/index.js";

const marker = Symbol("marker");

@Entity({ table: "Legacy", partitionKey: "{id}", rowKey: "r" })
export class Legacy {
  @Column({ type: "String" }) id!: string;
  // TypeScript-private and protected fields are ordinary properties at run time: allowed.
  @Column({ type: "Int32" }) private count = 0;
  @Column({ type: "Int32" }) protected level = 0;
  // With emitDecoratorMetadata, `type` may be left to inference.
  @Column() inferred!: Date;
  // @ts-expect-error static fields are not columns
  @Column({ type: "String" }) static shared = "";
  // @ts-expect-error symbol-named fields cannot be stored
  @Column({ type: "String" }) [marker] = "";
  // @ts-expect-error a method is not a column
  @Column() describe(): string {
    return `${this.id} ${this.count} ${this.level}`;
  }
  // @ts-expect-error @Column needs its parentheses
  @Column note!: string;
}

// The decorator as a legacy property decorator: (prototype, key).
class Plain {
  n!: number;
}
Column({ type: "Int32" })(Plain.prototype, "n");
// @ts-expect-error a String column on a number field
Column({ type: "String" })(Plain.prototype, "n");
// A key only known as `string` cannot be checked (the run time does).
Column({ type: "Int32" })(Plain.prototype, "n" as string);
Entity({ table: "Plain", partitionKey: "{n}", rowKey: "r" })(Plain);

// @ts-expect-error @Entity needs its options
@Entity
export class NoOptions {}
