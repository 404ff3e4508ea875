import { SchemaError } from "../errors.js";
import type { KeyTemplate } from "../keys/key-template.js";
import { MAX_WIDE_PARTS, WIDE_SEPARATOR } from "../serialization/wide-rows.js";
import { ServiceLimits } from "../util/service-limits.js";
import { ENTITY_TYPE_PROPERTY, WIDE_PART_PROPERTY } from "../wire/system-properties.js";

/** A wide entity's columns must fit its largest form: 100 rows (one transaction) of 250 columns each. */
export function assertWideColumnCount(entity: string, count: number): void {
  const perRow = ServiceLimits.maxProperties - 2;
  const max = MAX_WIDE_PARTS * perRow;
  if (count <= max) return;
  throw new SchemaError(
    `${entity} has ${count} columns; a wide entity holds at most ${max} (${MAX_WIDE_PARTS} rows, one entity group transaction, of ${perRow} columns besides '${ENTITY_TYPE_PROPERTY}' and '${WIDE_PART_PROPERTY}')`,
  );
}

/**
 * What a wide entity cannot be combined with, and why: its columns are spread over several rows,
 * so anything that reads or writes one row as the whole entity would see a fragment.
 */
export function assertWideCombinations(entity: string, partitionKey: KeyTemplate, rowKey: KeyTemplate): void {
  // Indexes and summaries compose: a copy holds the entity's keys, the index's key fields and its
  // `project` fields (one row), and summary rows ride in the entity's transaction beside its rows.
  if (rowKey.source.includes(WIDE_SEPARATOR)) {
    throw new SchemaError(
      `${entity}: a wide entity's rowKey '${rowKey.source}' may not contain a space: the space separates the RowKey from each row's part number`,
    );
  }
  const hashed = partitionKey.hashed?.field;
  if (hashed !== undefined && rowKey.fields[0] !== hashed) {
    throw new SchemaError(
      `${entity}: a wide entity with the hashed partition field '${hashed}' needs it as the first field of its rowKey: a find would otherwise filter on the column, which only one of the entity's rows holds`,
    );
  }
}
