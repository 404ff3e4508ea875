import type { ColumnType } from "../wire/column-type.js";

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
