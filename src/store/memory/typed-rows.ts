import { ticksToIso, ticksToMs } from "../../util/unix-ticks.js";
import type { EdmValue, EntityRecord } from "../served-store.js";
import type { StoredEntity, WireValue } from "../table-store.js";

/** A record as the port's typed read answers it (`TableStore.queryTypedPage`): every value keeps its EDM type. */
export function recordToTyped(record: EntityRecord): StoredEntity {
  const row: StoredEntity = {
    partitionKey: record.partitionKey,
    rowKey: record.rowKey,
    etag: record.etag,
    timestamp: new Date(ticksToMs(record.timestamp)),
  };
  for (const [name, value] of record.properties) {
    // A shadowed property (written through `tablekit serve`) has no place in the port's shape.
    if (Object.hasOwn(row, name)) continue;
    Object.defineProperty(row, name, {
      value: typedWire(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return row;
}

/** The value in the write form that stores it back as the same type and value (a whole Double stays a Double). */
function typedWire(v: EdmValue): WireValue {
  switch (v.type) {
    case "Double":
      return { type: "Double", value: v.value };
    case "Int64":
      return { type: "Int64", value: v.value.toString() };
    case "DateTime":
      // Seven fraction digits: the 100-ns ticks a Date would round to milliseconds.
      return { type: "DateTime", value: ticksToIso(v.value) };
    case "Guid":
      return { type: "Guid", value: v.value };
    case "Binary":
      return v.value.slice();
    default:
      return v.value;
  }
}
