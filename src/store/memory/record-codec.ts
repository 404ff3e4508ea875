import { StoreError } from "../../errors.js";
import type { EdmValue } from "./edm-value.js";
import { etagFromTicks } from "./etag-clock.js";
import type { Mutation } from "./mutation.js";
import type { EntityRecord } from "./typed-entity.js";

/** A mutation as JSON: every typed value encoded losslessly (see encodeValue). */
export type EncodedMutation =
  | { op: "createTable" | "deleteTable"; t: string }
  | { op: "put"; t: string; pk: string; rk: string; ts: string; p: [string, string, unknown][] }
  | { op: "delete"; t: string; pk: string; rk: string };

/** Encodes a mutation for the journal. */
export function encodeMutation(m: Mutation): EncodedMutation {
  switch (m.op) {
    case "createTable":
    case "deleteTable":
      return { op: m.op, t: m.table };
    case "delete":
      return { op: "delete", t: m.table, pk: m.partitionKey, rk: m.rowKey };
    case "put": {
      const r = m.record;
      // Properties as [name, type, value] triples, not an object: "__proto__" is a valid property name.
      const p: [string, string, unknown][] = [];
      for (const [name, value] of r.properties) p.push([name, value.type, encodeValue(value)]);
      return { op: "put", t: m.table, pk: r.partitionKey, rk: r.rowKey, ts: r.timestamp.toString(), p };
    }
  }
}

/** Decodes a journaled mutation; throws on anything malformed. */
export function decodeMutation(e: EncodedMutation): Mutation {
  switch (e.op) {
    case "createTable":
    case "deleteTable":
      return { op: e.op, table: str(e.t) };
    case "delete":
      return { op: "delete", table: str(e.t), partitionKey: str(e.pk), rowKey: str(e.rk) };
    case "put": {
      const timestamp = BigInt(str(e.ts));
      const properties = new Map<string, EdmValue>();
      for (const [name, type, value] of e.p) properties.set(str(name), decodeValue(type, value));
      const record: EntityRecord = {
        partitionKey: str(e.pk),
        rowKey: str(e.rk),
        timestamp,
        etag: etagFromTicks(timestamp),
        properties,
      };
      return { op: "put", table: str(e.t), record };
    }
    default:
      throw new StoreError(
        `MemoryStore journal: unknown operation ${JSON.stringify((e as { op: unknown }).op)}`,
      );
  }
}

/**
 * JSON for one value: Int64 and DateTime (ticks) as decimal strings, Double as its shortest
 * round-trip string (JSON has no NaN, Infinity or -0), Binary as base64, the rest as themselves.
 */
function encodeValue(v: EdmValue): unknown {
  switch (v.type) {
    case "Int64":
    case "DateTime":
      return v.value.toString();
    case "Double":
      return Object.is(v.value, -0) ? "-0" : String(v.value);
    case "Binary":
      return Buffer.from(v.value.buffer, v.value.byteOffset, v.value.byteLength).toString("base64");
    default:
      return v.value;
  }
}

function decodeValue(type: string, raw: unknown): EdmValue {
  switch (type) {
    case "String":
    case "Guid":
      return { type, value: str(raw) };
    case "Int32":
      if (typeof raw === "number") return { type, value: raw };
      break;
    case "Boolean":
      if (typeof raw === "boolean") return { type, value: raw };
      break;
    case "Int64":
    case "DateTime":
      return { type, value: BigInt(str(raw)) };
    case "Double":
      return { type, value: Number(str(raw)) };
    case "Binary":
      return { type, value: new Uint8Array(Buffer.from(str(raw), "base64")) };
  }
  throw new StoreError(`MemoryStore journal: malformed ${type} value ${JSON.stringify(raw)}`);
}

function str(v: unknown): string {
  if (typeof v !== "string")
    throw new StoreError(`MemoryStore journal: expected a string, got ${JSON.stringify(v)}`);
  return v;
}
