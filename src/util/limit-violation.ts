import type { TransactionAction } from "../wire/wire-entity.js";
import { keyBytes, reservedPropertyName, type StoreLimits } from "./store-limits.js";

/** Which backend limit a write breaks, and how to say so. */
export interface LimitViolation {
  rule: "key-size" | "reserved-property" | "too-many-properties";
  /** PartitionKey, RowKey or the property's name. */
  field: string;
  message: string;
}

/** Wire names that are the port's metadata, not properties stored under that name. */
const METADATA = new Set(["partitionKey", "rowKey", "etag", "timestamp"]);

/**
 * The first backend limit one write breaks beyond the Table service rules every write is checked
 * against anyway: key sizes as the backend counts them, reserved property names, and the property
 * count (e.g. the Cosmos DB Table API's 255-byte RowKey and its reserved ID, rid, etag, ResourceId).
 */
export function limitViolation(limits: StoreLimits, action: TransactionAction): LimitViolation | undefined {
  const [partitionKey, rowKey] =
    action.kind === "delete"
      ? [action.partitionKey, action.rowKey]
      : [action.entity.partitionKey, action.entity.rowKey];
  const keys = [
    ["PartitionKey", partitionKey, limits.maxPartitionKeyBytes],
    ["RowKey", rowKey, limits.maxRowKeyBytes],
  ] as const;
  for (const [which, key, max] of keys) {
    if (typeof key !== "string") continue;
    const bytes = keyBytes(limits, key);
    if (bytes > max) {
      const unit = limits.keyEncoding === "utf8" ? "UTF-8 bytes" : "bytes (2 per UTF-16 unit)";
      return {
        rule: "key-size",
        field: which,
        message: `${which} is ${bytes} ${unit}; this backend allows at most ${max}`,
      };
    }
  }
  if (action.kind === "delete") return undefined;
  let properties = 0;
  for (const name of Object.keys(action.entity)) {
    if (METADATA.has(name) || name.startsWith("odata.")) continue;
    properties++;
    const reserved = reservedPropertyName(limits, name);
    if (reserved !== undefined) {
      return {
        rule: "reserved-property",
        field: name,
        message: `property name '${name}' is reserved by this backend (reserved: ${limits.reservedPropertyNames.join(", ")}); rename the column with @Column({ name })`,
      };
    }
  }
  if (properties > limits.maxProperties) {
    return {
      rule: "too-many-properties",
      field: "properties",
      message: `the entity has ${properties} properties; this backend allows at most ${limits.maxProperties}`,
    };
  }
  return undefined;
}
