import { StoreError } from "../../errors.js";
import { storedDouble } from "../../util/stored-double.js";
import type { EdmValue } from "./edm-value.js";
import { etagFromTicks } from "./etag-clock.js";
import type { Mutation } from "./mutation.js";
import { PropertyShape, packValue, type StoredValue, unpackValue } from "./property-shape.js";
import { StoredRecord } from "./typed-entity.js";

/** A mutation as JSON: every typed value encoded losslessly (see encodeValue). */
export type EncodedMutation =
  | { op: "createTable" | "deleteTable"; t: string }
  | { op: "put"; t: string; pk: string; rk: string; ts: string; p: [string, string, unknown][] }
  | { op: "delete"; t: string; pk: string; rk: string }
  | { op: "accountSetting"; n: string; v?: string }
  | { op: "tableSetting"; t: string; n: string; v?: string };

/** Encodes a mutation for the journal. */
export function encodeMutation(m: Mutation): EncodedMutation {
  switch (m.op) {
    case "createTable":
    case "deleteTable":
      return { op: m.op, t: m.table };
    case "delete":
      return { op: "delete", t: m.table, pk: m.partitionKey, rk: m.rowKey };
    case "accountSetting":
      return m.value === undefined ? { op: m.op, n: m.name } : { op: m.op, n: m.name, v: m.value };
    case "tableSetting":
      return m.value === undefined
        ? { op: m.op, t: m.table, n: m.name }
        : { op: m.op, t: m.table, n: m.name, v: m.value };
    case "put": {
      const r = m.record;
      // Properties as [name, type, value] triples, not an object: "__proto__" is a valid property name.
      const p: [string, string, unknown][] = [];
      const { names, types } = r.shape;
      for (let i = 0; i < names.length; i++) {
        const type = types[i] as EdmValue["type"];
        p.push([names[i] as string, type, encodeValue(unpackValue(type, r.values[i] as StoredValue))]);
      }
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
    case "accountSetting":
      return { op: e.op, name: str(e.n), value: e.v === undefined ? undefined : str(e.v) };
    case "tableSetting":
      return { op: e.op, table: str(e.t), name: str(e.n), value: e.v === undefined ? undefined : str(e.v) };
    case "put": {
      const timestamp = decodeTicks(str(e.ts));
      const properties = packTriples(e.p);
      const record = new StoredRecord(str(e.pk), str(e.rk), timestamp, etagFromTicks(timestamp), properties);
      return { op: "put", table: str(e.t), record };
    }
    default:
      throw new StoreError(
        `MemoryStore journal: unknown operation ${JSON.stringify((e as { op: unknown }).op)}`,
      );
  }
}

/** Journaled [name, type, value] triples as packed properties, in order. */
function packTriples(triples: [string, string, unknown][]): { shape: PropertyShape; values: StoredValue[] } {
  let shape = PropertyShape.EMPTY;
  const values: StoredValue[] = new Array(triples.length); // exact size: no spare capacity per row
  let count = 0;
  for (const [name, type, value] of triples) {
    if (shape.indexOf(str(name)) >= 0) return packRepeated(triples);
    const decoded = decodeValue(type, value);
    shape = shape.with(name, decoded.type);
    values[count++] = packValue(decoded);
  }
  values.length = count;
  return { shape, values };
}

/**
 * Triples with a repeated name (never written by encodeMutation): the name keeps its first position
 * and its last value, as the Map the triples were once read into did.
 */
function packRepeated(triples: [string, string, unknown][]): { shape: PropertyShape; values: StoredValue[] } {
  let shape = PropertyShape.EMPTY;
  const values: StoredValue[] = [];
  for (const [n, v] of new Map(triples.map(([n, t, v]) => [str(n), decodeValue(t, v)]))) {
    shape = shape.with(n, v.type);
    values.push(packValue(v));
  }
  return { shape, values };
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
      // A file written before -0 was normalised may hold "-0": it reads as the 0 a write stores now.
      return { type, value: storedDouble(Number(str(raw))) };
    case "Binary":
      return { type, value: new Uint8Array(Buffer.from(str(raw), "base64")) };
  }
  throw new StoreError(`MemoryStore journal: malformed ${type} value ${JSON.stringify(raw)}`);
}

// The rows of one commit share a Timestamp: decode it once and share the bigint.
let lastTicksText: string | undefined;
let lastTicks = 0n;

function decodeTicks(text: string): bigint {
  if (text !== lastTicksText) {
    lastTicks = BigInt(text);
    lastTicksText = text;
  }
  return lastTicks;
}

function str(v: unknown): string {
  if (typeof v !== "string")
    throw new StoreError(`MemoryStore journal: expected a string, got ${JSON.stringify(v)}`);
  return v;
}
