import type { TransactionAction } from "../wire/wire-entity.js";
import { wireEntityBytes } from "./entity-size.js";
import { keyBytes, reservedPropertyName, type StoreLimits } from "./store-limits.js";

/** Which backend limit a write breaks, and how to say so. */
export interface LimitViolation {
  rule: "key-size" | "reserved-property" | "too-many-properties" | "entity-size";
  /** PartitionKey, RowKey or the property's name. */
  field: string;
  message: string;
}

/** Wire names that are the port's metadata, not properties stored under that name. */
const METADATA = new Set(["partitionKey", "rowKey", "etag", "timestamp"]);

/**
 * The first backend limit one row as sent breaks: key sizes as the backend counts them, reserved
 * property names (e.g. the Cosmos DB Table API's 255-byte RowKey and its reserved ID, rid, etag,
 * ResourceId), and the property count and 1 MiB size of the whole row, tablekit's own properties
 * (`EntityType`, `_tk…` bookkeeping of entity rows, index copies, summaries) included.
 * It runs on every row sent, so the usual row (nothing broken) costs one walk and no allocation.
 */
export function limitViolation(limits: StoreLimits, action: TransactionAction): LimitViolation | undefined {
  const deleting = action.kind === "delete";
  const partitionKey = deleting ? action.partitionKey : action.entity.partitionKey;
  const rowKey = deleting ? action.rowKey : action.entity.rowKey;
  const keys =
    keyViolation(limits, "PartitionKey", partitionKey, limits.maxPartitionKeyBytes) ??
    keyViolation(limits, "RowKey", rowKey, limits.maxRowKeyBytes);
  if (keys !== undefined || deleting) return keys;
  const entity = action.entity;
  if (limits.reservedPropertyNames.length > 0) {
    for (const name of Object.keys(entity)) {
      if (METADATA.has(name) || name.startsWith("odata.")) continue;
      const reserved = reservedPropertyName(limits, name);
      if (reserved !== undefined) {
        return {
          rule: "reserved-property",
          field: name,
          message: `property name '${name}' is reserved by this backend (reserved: ${limits.reservedPropertyNames.join(", ")}); rename the column with @Column({ name })`,
        };
      }
    }
  }
  const { bytes, properties } = wireEntityBytes(entity);
  if (properties > limits.maxProperties) {
    return {
      rule: "too-many-properties",
      field: "properties",
      message: `the row has ${properties} properties (tablekit's EntityType and _tk… bookkeeping included); the property budget is ${limits.maxProperties + 3} per entity including PartitionKey, RowKey and Timestamp, so at most ${limits.maxProperties} others`,
    };
  }
  if (bytes > limits.maxEntityBytes) {
    return {
      rule: "entity-size",
      field: "entity",
      message: `the row is ${bytes} bytes by the service's entity size formula (tablekit's EntityType and _tk… bookkeeping included); the service allows at most ${limits.maxEntityBytes} (1 MiB)`,
    };
  }
  return undefined;
}

function keyViolation(
  limits: StoreLimits,
  which: "PartitionKey" | "RowKey",
  key: unknown,
  max: number,
): LimitViolation | undefined {
  if (typeof key !== "string") return undefined;
  const bytes = keyBytes(limits, key);
  if (bytes <= max) return undefined;
  const unit = limits.keyEncoding === "utf8" ? "UTF-8 bytes" : "bytes (2 per UTF-16 unit)";
  return {
    rule: "key-size",
    field: which,
    message: `${which} is ${bytes} ${unit}; this backend allows at most ${max}`,
  };
}
