import type { EdmType } from "../store/table-store.js";

/** A column's type: one of the service's EDM types, or `Json` (any JSON value stored as a String). */
export type ColumnType = EdmType | "Json";

export const COLUMN_TYPES: readonly ColumnType[] = [
  "String",
  "Int32",
  "Int64",
  "Double",
  "Boolean",
  "DateTime",
  "Guid",
  "Binary",
  "Json",
];

/** Maps a `design:type` constructor (emitted by tsc's `emitDecoratorMetadata`) to a column type. */
export function inferColumnType(designType: unknown): ColumnType | undefined {
  switch (designType) {
    case String:
      return "String";
    case Number:
      return "Double";
    case Boolean:
      return "Boolean";
    case Date:
      return "DateTime";
    case BigInt:
      return "Int64";
    case Uint8Array:
    case Buffer:
      return "Binary";
    case undefined:
    case null:
    case Function:
      return undefined;
    default:
      // Object, Array, interfaces and classes: stored as JSON text.
      return typeof designType === "function" ? "Json" : undefined;
  }
}
