// Standard ECMAScript decorators only (tsconfig.standard.json): members only this dialect can
// decorate, and the decorators' call shape as TypeScript checks it.

import { expectTypeOf } from "vitest";
import { Column, Entity } from "../../src/index.js";

const marker = Symbol("marker");

@Entity({ table: "Standard", partitionKey: "{id}", rowKey: "r" })
export class Standard {
  @Column({ type: "String" }) id!: string;
  // TypeScript-private fields are ordinary properties at run time: allowed.
  @Column({ type: "Int32" }) private count = 0;
  // @ts-expect-error an `accessor` is not a field: tablekit stores plain fields
  @Column({ type: "String" }) accessor label = "";
  // @ts-expect-error ES-private (#) fields cannot be read or written as properties
  @Column({ type: "String" }) #secret = "";
  // @ts-expect-error static fields are not columns
  @Column({ type: "String" }) static shared = "";
  // @ts-expect-error symbol-named fields cannot be stored
  @Column({ type: "String" }) [marker] = "";
  // @ts-expect-error a method is not a column
  @Column() describe(): string {
    return `${this.id} ${this.count} ${this.#secret}`;
  }
  // @ts-expect-error @Column needs its parentheses
  @Column note!: string;
}

// The decorator as a standard field decorator: (undefined, context) with the field's type in it.
declare const context: ClassFieldDecoratorContext<Standard, number> & {
  name: "n";
  private: false;
  static: false;
};
Column({ type: "Int32" })(undefined, context);
// @ts-expect-error a String column on a number field
Column({ type: "String" })(undefined, context);

// @ts-expect-error @Entity needs its options
@Entity
export class NoOptions {}

export class Members {
  // @ts-expect-error @Entity decorates classes
  @Entity({ table: "Members", partitionKey: "{id}", rowKey: "r" }) id!: string;
}

expectTypeOf(Entity({ table: "T", partitionKey: "p", rowKey: "r" })).toBeFunction();
