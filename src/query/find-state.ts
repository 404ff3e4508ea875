import { ValidationError } from "../errors.js";
import type { KeyTemplate } from "../keys/key-template.js";
import type { RowKeyBounds } from "./query-plan.js";

/** Where a `find` over one key space looks: its partition and RowKey bounds. */
export interface FindState {
  /** The partition, or with `partitionKeys` the first bucket's. */
  partitionKey: string;
  /** Every hash bucket's partition, when `find` fixed all partition fields but the hashed one (a fan-out). */
  partitionKeys?: readonly string[];
  rowFields: Record<string, unknown>;
  rowKey: RowKeyBounds;
}

/**
 * Resolves `find(values)` over a key space (an entity's, or an index's): every partition-key
 * field is required (except a hashed one: then the query fans out over its buckets); leading row-key fields narrow it to a prefix range, all of them to a point.
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
  const hashed = partitionKey.hashed;
  const fanOut = hashed !== undefined && missing.length === 1 && missing[0] === hashed.field;
  if (missing.length > 0 && !fanOut) {
    throw new ValidationError(
      "find-partition",
      `${name}: find() needs every partition-key field (missing ${missing.join(", ")}); use scan() for a table scan or an index`,
      { field: missing[0] as string },
    );
  }
  const rowFields: Record<string, unknown> = {};
  let contiguous = true;
  for (const field of rowKey.fields) {
    if (given[field] === undefined) contiguous = false;
    // A partition field that also sits later in the RowKey is already fixed by the partition (or, if
    // hashed, by a filter the repository adds), so it must not count as a gap in the RowKey prefix.
    else if (contiguous || !partitionKey.fields.includes(field)) rowFields[field] = given[field];
  }
  const prefix = rowKey.encodePrefix(rowFields, "RowKey");
  // Only the partition's own fields: the row-key fields given beside them are not the template's.
  const partitionValues = fanOut
    ? Object.fromEntries(partitionKey.fields.map((field) => [field, given[field]]))
    : undefined;
  const partitions = partitionValues && partitionKey.bucketPrefixes(partitionValues, "PartitionKey").prefixes;
  return {
    ...(partitions === undefined ? {} : { partitionKeys: partitions }),
    partitionKey: partitions?.[0] ?? partitionKey.encode(given, "PartitionKey"),
    rowFields,
    rowKey: prefix.complete ? { eq: rowKey.encode(rowFields, "RowKey") } : rowKey.prefixRange(rowFields),
  };
}
