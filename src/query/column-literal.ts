import type { ColumnModel } from "../schema/entity-model.js";
import { createValueWriter } from "../serialization/value-codecs.js";
import type { TypedValue } from "../wire/wire-entity.js";
import { formatBinary, formatDateTime, formatDouble, formatGuid, quoteString } from "./odata.js";

/** Renders a value as the OData literal of a column's type, after the same checks a write makes. */
export function formatColumnLiteral(column: ColumnModel, value: unknown): string {
  const wire = createValueWriter(column.type, column.field)(value);
  switch (column.type) {
    case "String":
    case "Json":
      return quoteString(wire as string);
    case "Int32":
      return String(wire);
    case "Int64":
      return `${(wire as TypedValue).value}L`;
    case "Double":
      return formatDouble((wire as TypedValue).value as number);
    case "Boolean":
      return wire ? "true" : "false";
    case "DateTime":
      return formatDateTime(wire as Date);
    case "Guid":
      return formatGuid((wire as TypedValue).value as string);
    case "Binary":
      return formatBinary(wire as Uint8Array);
  }
}
