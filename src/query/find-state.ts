import { ValidationError } from "../errors.js";
import type { KeyTemplate } from "../keys/key-template.js";
import type { RowKeyBounds } from "./query-plan.js";

/** Where a `find` over one key space looks: its partition and RowKey bounds. */
export interface FindState {
  partitionKey: string;
  rowFields: Record<string, unknown>;
  rowKey: RowKeyBounds;
}

/**
 * Resolves `find(values)` over a key space (an entity's, or an index's): every partition-key
 * field is required; leading row-key fields narrow it to a prefix range, all of them to a point.
 */
export function findState(
  name: string,
  partitionKey: KeyTemplate,
  rowKey: KeyTemplate,
  values: Record<string, unknown> | undefined,
): FindState {
  const given = values ?? {};
  for (const field of Object.keys(given)) {
    if (!partitionKey.fields.includes(field) && !rowKey.fields.includes(field)) {
      throw new ValidationError(
        "find-key-fields",
        `${name}: find() takes key fields only; '${field}' is not part of the key (use .where({ ${field}: … }))`,
        { field },
      );
    }
  }
  const missing = partitionKey.fields.filter((field) => given[field] === undefined);
  if (missing.length > 0) {
    throw new ValidationError(
      "find-partition",
      `${name}: find() needs every partition-key field (missing ${missing.join(", ")}); use scan() for a table scan or an index`,
      { field: missing[0] as string },
    );
  }
  const rowFields: Record<string, unknown> = {};
  for (const field of rowKey.fields) if (given[field] !== undefined) rowFields[field] = given[field];
  const prefix = rowKey.encodePrefix(rowFields, "RowKey");
  return {
    partitionKey: partitionKey.encode(given, "PartitionKey"),
    rowFields,
    rowKey: prefix.complete ? { eq: rowKey.encode(rowFields, "RowKey") } : rowKey.prefixRange(rowFields),
  };
}
