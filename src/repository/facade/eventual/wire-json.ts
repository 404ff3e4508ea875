import { ValidationError } from "../../../errors.js";
import type { EdmType, WireEntity, WireValue } from "../../../store/table-store.js";

/** A wire entity as JSON: keys, then `[name, tag, value]` triples (an object would choke on "__proto__"). */
export interface EncodedWire {
  pk: string;
  rk: string;
  p: [string, string, string | number | boolean][];
}

/** Encodes a wire entity losslessly for the intent log (bigint, Date, bytes and -0 survive JSON). */
export function encodeWire(wire: WireEntity): EncodedWire {
  const p: EncodedWire["p"] = [];
  for (const name in wire) {
    if (name === "partitionKey" || name === "rowKey") continue;
    const value = wire[name];
    if (value === undefined || value === null) continue;
    p.push([name, ...encodeValue(value)]);
  }
  return { pk: wire.partitionKey, rk: wire.rowKey, p };
}

/** Decodes what `encodeWire` wrote. */
export function decodeWire(encoded: EncodedWire): WireEntity {
  const wire: WireEntity = { partitionKey: encoded.pk, rowKey: encoded.rk };
  for (const [name, tag, value] of encoded.p) wire[name] = decodeValue(tag, value);
  return wire;
}

function encodeValue(value: WireValue): [string, string | number | boolean] {
  switch (typeof value) {
    case "string":
      return ["s", value];
    case "boolean":
      return ["b", value];
    case "number":
      // JSON has no -0, NaN or Infinity: numbers travel as their round-trip text.
      return ["n", Object.is(value, -0) ? "-0" : String(value)];
    case "bigint":
      return ["i", value.toString()];
    default:
      if (value instanceof Date) return ["d", value.getTime()];
      if (value instanceof Uint8Array)
        return ["x", Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64")];
      if (value !== null && typeof value === "object")
        return [`t:${value.type}`, typeof value.value === "number" ? String(value.value) : value.value];
      throw new ValidationError("eventual-value", `cannot record a value of type ${typeof value}`);
  }
}

function decodeValue(tag: string, value: string | number | boolean): WireValue {
  switch (tag) {
    case "s":
    case "b":
      return value;
    case "n":
      return Number(value);
    case "i":
      return BigInt(String(value));
    case "d":
      return new Date(Number(value));
    case "x":
      return new Uint8Array(Buffer.from(String(value), "base64"));
    default: {
      const type = tag.slice(2) as EdmType;
      const numeric = type === "Double" || type === "Int32";
      return { type, value: numeric && typeof value === "string" ? Number(value) : value };
    }
  }
}
