import { ValidationError } from "../../../errors.js";
import type { EntityModel } from "../../../schema/entity-model.js";

/**
 * The unit of the bulk item at `index` (its position in the input, from 0). A `ValidationError` the
 * item raises is thrown again naming that position and, when they encode, the item's keys: one bad
 * item among thousands is then found without a search.
 */
export function unitOfItem<I, U>(
  model: EntityModel<object>,
  item: I,
  index: number,
  toUnit: (item: I) => U,
): U {
  try {
    return toUnit(item);
  } catch (error) {
    if (!(error instanceof ValidationError) || error.itemIndex !== undefined) throw error;
    throw atBulkItem(error, index, keysOf(model, item));
  }
}

/**
 * A bulk item's `ValidationError` renumbered: the item is at `index` of the whole input (a bulk write
 * split into groups, one per period table, reports positions within its group).
 */
export function renumbered(error: unknown, positions: readonly number[]): unknown {
  if (!(error instanceof ValidationError) || error.itemIndex === undefined) return error;
  const index = positions[error.itemIndex];
  const original = error.cause;
  if (index === undefined || !(original instanceof ValidationError)) return error;
  return atBulkItem(original, index, { partitionKey: error.partitionKey, rowKey: error.rowKey });
}

interface ItemKeys {
  partitionKey: string | undefined;
  rowKey: string | undefined;
}

/** `error` (kept as the cause) with the item's position and keys in its fields and message. */
function atBulkItem(error: ValidationError, index: number, keys: ItemKeys): ValidationError {
  const named = [
    `bulk item ${index}`,
    ...(keys.partitionKey === undefined ? [] : [`PartitionKey '${keys.partitionKey}'`]),
    ...(keys.rowKey === undefined ? [] : [`RowKey '${keys.rowKey}'`]),
  ];
  return new ValidationError(error.rule, `${error.message} (${named.join(", ")})`, {
    field: error.field,
    cause: error,
    itemIndex: index,
    partitionKey: keys.partitionKey,
    rowKey: keys.rowKey,
  });
}

/** The item's keys where its key fields encode (an invalid key value leaves that key out). */
function keysOf(model: EntityModel<object>, item: unknown): ItemKeys {
  if (item === null || typeof item !== "object") return { partitionKey: undefined, rowKey: undefined };
  const values = item as Record<string, unknown>;
  return {
    partitionKey: tryEncode(() => model.partitionKey.encode(values, "PartitionKey")),
    rowKey: tryEncode(() => model.rowKey.encode(values, "RowKey")),
  };
}

function tryEncode(encode: () => string): string | undefined {
  try {
    return encode();
  } catch {
    return undefined;
  }
}
