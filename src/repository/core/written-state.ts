import type { StoredEntity, WireEntity, WireValue, WriteMode } from "../../store/table-store.js";

const SYSTEM = new Set(["partitionKey", "rowKey", "etag", "timestamp", "odata.etag"]);

/**
 * True when the stored entity holds exactly what `written` wrote (replace: the same properties;
 * merge: at least those). Used to tell a retried write's 409/412 caused by our own earlier,
 * applied attempt (success) from a real conflict with another writer (failure).
 */
export function holdsWrittenState(
  written: WireEntity,
  stored: StoredEntity | undefined,
  mode: WriteMode,
): boolean {
  if (!stored) return false;
  let count = 0;
  for (const name in written) {
    if (SYSTEM.has(name)) continue;
    const value = written[name];
    if (value === undefined || value === null) continue;
    count++;
    if (canonical(value) !== canonical(stored[name])) return false;
  }
  if (mode === "merge") return true;
  let storedCount = 0;
  for (const name in stored) {
    if (!SYSTEM.has(name) && stored[name] !== undefined && stored[name] !== null) storedCount++;
  }
  return storedCount === count;
}

/** One comparable text per value, whatever wire convention carried it. */
function canonical(value: WireValue | undefined): string {
  if (value === undefined || value === null) return "∅";
  switch (typeof value) {
    case "string":
      return `s:${value}`;
    case "number":
      return `n:${value}`;
    case "bigint":
      return `n:${value}`;
    case "boolean":
      return `b:${value}`;
    default:
      if (value instanceof Date) return `d:${value.getTime()}`;
      if (value instanceof Uint8Array)
        return `x:${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64")}`;
      switch (value.type) {
        case "Guid":
          return `g:${String(value.value).toLowerCase()}`;
        case "DateTime":
          return `d:${new Date(String(value.value)).getTime()}`;
        case "Binary":
          return `x:${value.value}`;
        case "Boolean":
          return `b:${value.value}`;
        case "String":
          return `s:${value.value}`;
        default:
          return `n:${value.value}`;
      }
  }
}
