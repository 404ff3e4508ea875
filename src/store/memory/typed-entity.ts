import type { StoredEntity, WireEntity } from "../table-store.js";
import { type EdmValue, edmToWire } from "./edm-value.js";
import { checkKey, checkPropertyName } from "./entity-rules.js";
import { badRequest } from "./service-errors.js";
import { ticksToMs } from "./ticks.js";
import { wireToEdm } from "./wire-values.js";

/** A stored entity: keys, server Timestamp (ticks) and its ETag, and typed user properties. Immutable. */
export interface EntityRecord {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly timestamp: bigint;
  readonly etag: string;
  readonly properties: ReadonlyMap<string, EdmValue>;
}

/** A written entity after validation and type inference, before it gets a Timestamp. */
export interface ParsedEntity {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly properties: Map<string, EdmValue>;
}

// Fields of the wire shape that are not user properties. `etag` and `timestamp` come back on entities
// that were read; the SDK sends them as odata.etag / Timestamp, which the service ignores on writes.
const NOT_USER_PROPERTIES = new Set(["partitionKey", "rowKey", "etag", "timestamp", "Timestamp"]);

/**
 * Validates a written entity (keys, property names and values, per-value limits) and converts it to
 * typed values; entity-wide limits are checked separately because a merge checks the merged result.
 */
export function parseWireEntity(entity: WireEntity): ParsedEntity {
  if (typeof entity !== "object" || entity === null) {
    throw badRequest("InvalidInput", "the entity must be an object");
  }
  const partitionKey = checkKey("PartitionKey", entity.partitionKey);
  const rowKey = checkKey("RowKey", entity.rowKey);
  const properties = new Map<string, EdmValue>();
  for (const name of Object.keys(entity)) {
    if (NOT_USER_PROPERTIES.has(name)) continue;
    const raw = entity[name];
    if (raw === undefined || raw === null) continue; // the service ignores null properties
    checkPropertyName(name);
    const value = wireToEdm(name, raw);
    if (value !== undefined) properties.set(name, value);
  }
  return { partitionKey, rowKey, properties };
}

/**
 * Renders a record in the shape `@azure/data-tables` returns, as a fresh copy. `partitionKey`, `rowKey`,
 * `etag` and `timestamp` are always present; with `select`, only the selected user properties that the
 * entity has are added (Azure would return a selected-but-missing property as null; we omit it).
 */
export function recordToStored(record: EntityRecord, select?: ReadonlySet<string>): StoredEntity {
  const out: StoredEntity = {
    partitionKey: record.partitionKey,
    rowKey: record.rowKey,
    etag: record.etag,
    timestamp: new Date(ticksToMs(record.timestamp)),
  };
  for (const [name, value] of record.properties) {
    if (select !== undefined && !select.has(name)) continue;
    if (name === "__proto__") {
      // "__proto__" is a valid property name, but assigning it would replace the object's prototype.
      Object.defineProperty(out, name, {
        value: edmToWire(value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      out[name] = edmToWire(value);
    }
  }
  return out;
}
