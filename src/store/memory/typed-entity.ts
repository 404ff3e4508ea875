import { ServiceLimits } from "../../util/service-limits.js";
import { storedDouble } from "../../util/stored-double.js";
import { ticksToMs } from "../../util/unix-ticks.js";
import { type EntityRecord, SHADOWED_PROPERTIES, type WireEntityWithShadowed } from "../served-store.js";
import type { EdmType, StoredEntity, WireEntity, WireValue } from "../table-store.js";
import type { EdmValue } from "./edm-value.js";
import { checkKey, checkPropertyName } from "./entity-rules.js";
import {
  type PackedProperties,
  PackedPropertyMap,
  type PropertyMap,
  PropertyShape,
  packValue,
  type StoredValue,
  unpackValue,
} from "./property-shape.js";
import { badRequest } from "./service-errors.js";
import { wireToEdm } from "./wire-values.js";

/**
 * The memory store's row: keys, Timestamp, ETag and the user properties packed as a shared shape
 * plus an array of unboxed values (rows written in one request share their Timestamp and ETag).
 * Immutable, except that the index may swap `partitionKey` for an equal string a neighbour already
 * holds, so the rows of one partition share one key string.
 */
export class StoredRecord implements EntityRecord, PackedProperties {
  partitionKey: string;
  readonly rowKey: string;
  readonly timestamp: bigint;
  readonly etag: string;
  readonly shape: PropertyShape;
  readonly values: readonly StoredValue[];

  constructor(
    partitionKey: string,
    rowKey: string,
    timestamp: bigint,
    etag: string,
    properties: PackedProperties,
  ) {
    this.partitionKey = partitionKey;
    this.rowKey = rowKey;
    this.timestamp = timestamp;
    this.etag = etag;
    this.shape = properties.shape;
    this.values = properties.values;
  }

  /** One user property, typed, or `undefined` when the row does not have it. */
  property(name: string): EdmValue | undefined {
    const i = this.shape.indexOf(name);
    return i < 0 ? undefined : unpackValue(this.shape.types[i] as EdmType, this.values[i] as StoredValue);
  }

  /** The user properties by name, typed (a view made on each access). */
  get properties(): PropertyMap {
    return new PackedPropertyMap(this);
  }
}

/** A written entity after validation and type inference, before it gets a Timestamp. */
export interface ParsedEntity extends PackedProperties {
  readonly partitionKey: string;
  readonly rowKey: string;
}

// Fields of the wire shape that are not user properties. `etag` and `timestamp` come back on entities
// that were read; the SDK sends them as odata.etag / Timestamp, which the service ignores on writes.
const NOT_USER_PROPERTIES = new Set(["partitionKey", "rowKey", "etag", "timestamp", "Timestamp"]);

/**
 * Validates a written entity (keys, property names and values, per-value limits) and converts it to
 * packed typed values; entity-wide limits are checked separately because a merge checks the merged result.
 */
export function parseWireEntity(entity: WireEntity): ParsedEntity {
  if (typeof entity !== "object" || entity === null) {
    throw badRequest("InvalidInput", "the entity must be an object");
  }
  const partitionKey = checkKey("PartitionKey", entity.partitionKey);
  const rowKey = checkKey("RowKey", entity.rowKey);
  let shape = PropertyShape.EMPTY;
  const names = Object.keys(entity);
  // Sized up front and trimmed at the end: a pushed-to array keeps spare capacity for every row.
  const values: StoredValue[] = new Array(names.length);
  let count = 0;
  for (const name of names) {
    if (NOT_USER_PROPERTIES.has(name)) continue;
    const raw = entity[name];
    if (raw === undefined || raw === null) continue; // the service ignores null properties
    // A name some row already has at this position was checked when that row was written.
    if (!shape.hasNext(name)) checkPropertyName(name);
    const type = fastType(raw);
    if (type !== undefined) {
      shape = shape.with(name, type);
      values[count++] = fastValue(type, raw);
      continue;
    }
    const value = wireToEdm(name, raw);
    if (value === undefined) continue;
    shape = shape.with(name, value.type);
    values[count++] = packValue(value);
  }
  const shadowed = (entity as WireEntityWithShadowed)[SHADOWED_PROPERTIES];
  if (shadowed !== undefined) {
    for (const name of Object.keys(shadowed)) {
      if (!NOT_USER_PROPERTIES.has(name) || name === "Timestamp") continue;
      const raw = shadowed[name];
      if (raw === undefined || raw === null) continue; // the service ignores null properties
      checkPropertyName(name);
      const value = wireToEdm(name, raw);
      if (value === undefined) continue;
      shape = shape.with(name, value.type);
      values[count++] = packValue(value);
    }
  }
  values.length = count;
  return { partitionKey, rowKey, shape, values };
}

const SHORT_INTEGER = /^[+-]?\d{1,15}$/;

/**
 * The EDM type of a written value whose stored form needs no checks beyond those made here (the
 * common cases of a bulk load), or `undefined` to take `wireToEdm`, which also reports invalid input.
 * Must agree with `wireToEdm` + `packValue` wherever it answers.
 */
function fastType(raw: WireValue): EdmType | undefined {
  switch (typeof raw) {
    case "string":
      return raw.length <= ServiceLimits.maxStringLength ? "String" : undefined;
    case "boolean":
      return "Boolean";
    case "number":
      return Number.isInteger(raw) && raw >= ServiceLimits.minInt32 && raw <= ServiceLimits.maxInt32
        ? "Int32"
        : "Double";
    case "object": {
      if (raw instanceof Date) {
        const ms = raw.getTime();
        return ms >= ServiceLimits.minDateTimeMs && ms <= ServiceLimits.maxDateTimeMs
          ? "DateTime"
          : undefined;
      }
      if (raw === null || raw instanceof Uint8Array) return undefined;
      const { type, value } = raw as { type?: unknown; value?: unknown };
      if (type === "Double" && typeof value === "number") return "Double";
      // At most 15 digits: exactly a safe integer, stored as a number (see packValue).
      if (type === "Int64" && typeof value === "string" && SHORT_INTEGER.test(value)) return "Int64";
      return undefined;
    }
    default:
      return undefined;
  }
}

/** The stored form of a value `fastType` typed. */
function fastValue(type: EdmType, raw: WireValue): StoredValue {
  switch (type) {
    case "Int32":
      return raw === 0 ? 0 : (raw as number); // -0 has no Int32 form
    case "DateTime":
      return (raw as Date).getTime();
    case "Double":
      return storedDouble(typeof raw === "number" ? raw : (raw as { value: number }).value);
    case "Int64": {
      const n = Number((raw as { value: string }).value);
      return n === 0 ? 0 : n;
    }
    default:
      return raw as string | boolean;
  }
}

/**
 * Renders a record in the shape `@azure/data-tables` returns, as a fresh copy. Without `select`,
 * `partitionKey`, `rowKey`, `etag`, `timestamp` and every property; with it, as the service answers a
 * `$select`, the `etag` and only the named properties that the entity has: PartitionKey, RowKey and
 * Timestamp too come only when named (Azure would return a selected-but-missing property as null; the
 * port omits it). Azurite's `NormalizedEntity.toResponseString` filters the keys and Timestamp by the
 * same set; the service's "Query Entities" page: `$select` returns only the named properties.
 */
export function recordToStored(record: StoredRecord, select?: ReadonlySet<string>): StoredEntity {
  const out =
    select === undefined
      ? {
          partitionKey: record.partitionKey,
          rowKey: record.rowKey,
          etag: record.etag,
          timestamp: new Date(ticksToMs(record.timestamp)),
        }
      : projectedSystemProperties(record, select);
  const { names, types } = record.shape;
  const { values } = record;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (select !== undefined && !select.has(name)) continue;
    // A shadowed property (written through `tablekit serve`) has no place in this shape: its name is a field.
    if (NOT_USER_PROPERTIES.has(name)) continue;
    const value = storedToWire(types[i] as EdmType, values[i] as StoredValue);
    if (name === "__proto__") {
      // "__proto__" is a valid property name, but assigning it would replace the object's prototype.
      Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
    } else {
      out[name] = value;
    }
  }
  return out;
}

/** The system properties of a `$select` answer: the ETag always, the keys and Timestamp when named. */
function projectedSystemProperties(record: StoredRecord, select: ReadonlySet<string>): StoredEntity {
  const out: Partial<StoredEntity> = {};
  if (select.has("PartitionKey")) out.partitionKey = record.partitionKey;
  if (select.has("RowKey")) out.rowKey = record.rowKey;
  out.etag = record.etag;
  if (select.has("Timestamp")) out.timestamp = new Date(ticksToMs(record.timestamp));
  // The port's type names the keys: a projection without them is typed as if it had them.
  return out as StoredEntity;
}

/**
 * A stored value as `@azure/data-tables` returns it with default type conversion, as a fresh copy:
 * Int32/Double → number, Int64 → bigint, DateTime → Date (ms), Guid → `{ type: "Guid", value }`,
 * Binary → Uint8Array (the same as `edmToWire` of the unpacked value).
 */
function storedToWire(type: EdmType, value: StoredValue): WireValue {
  switch (type) {
    case "Int64":
      return typeof value === "number" ? BigInt(value) : (value as bigint);
    case "DateTime":
      return new Date(typeof value === "number" ? value : ticksToMs(value as bigint));
    case "Guid":
      return { type: "Guid", value: value as string };
    case "Binary":
      return (value as Uint8Array).slice();
    default:
      return value as WireValue;
  }
}

/** A table as the record an OData filter over the table list reads: its one property is `TableName`. */
export function tableRecord(name: string): EntityRecord {
  return {
    partitionKey: "",
    rowKey: "",
    timestamp: 0n,
    etag: "",
    properties: new Map([["TableName", { type: "String", value: name }]]),
  };
}
