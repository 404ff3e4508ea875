import type { EdmType } from "./wire-entity.js";

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
