import type { EdmType, WireValue } from "../../../wire/wire-entity.js";

/**
 * The plaintext of an encrypted property: one EDM type byte, then the value's bytes, so any column
 * type can be encrypted and reads back with the type it was written with (part of the stored format).
 */
const TYPE_BYTES: Readonly<Record<EdmType, number>> = {
  String: 1,
  Int32: 2,
  Double: 3,
  Int64: 4,
  Boolean: 5,
  DateTime: 6,
  Guid: 7,
  Binary: 8,
};

/** A wire value as plaintext bytes; `undefined` for `null` (nothing to encrypt). */
export function valueToBytes(value: WireValue): Uint8Array | undefined {
  if (value === null) return undefined;
  switch (typeof value) {
    case "string": {
      // The common case, written in place: no intermediate copy of the text's bytes.
      const out = Buffer.allocUnsafe(1 + Buffer.byteLength(value, "utf8"));
      out[0] = TYPE_BYTES.String;
      out.write(value, 1, "utf8");
      return out;
    }
    case "boolean":
      return tagged("Boolean", Buffer.from([value ? 1 : 0]));
    case "bigint":
      return tagged("Int64", Buffer.from(value.toString(), "latin1"));
    case "number":
      // An unannotated integer is an Int32 on the wire (the SDK's convention); anything else a Double.
      return Number.isInteger(value) && (value | 0) === value
        ? tagged("Int32", int32(value))
        : tagged("Double", float64(value));
    default:
      break;
  }
  if (value instanceof Date) return tagged("DateTime", Buffer.from(value.toISOString(), "latin1"));
  if (value instanceof Uint8Array) return tagged("Binary", value);
  switch (value.type) {
    case "Double":
      return tagged("Double", float64(Number(value.value)));
    case "Int32":
      return tagged("Int32", int32(Number(value.value)));
    case "Boolean":
      return tagged("Boolean", Buffer.from([String(value.value) === "true" ? 1 : 0]));
    case "Binary":
      return tagged("Binary", Buffer.from(String(value.value), "base64"));
    default:
      // String, Int64, Guid and DateTime travel as text.
      return tagged(value.type, Buffer.from(String(value.value), "utf8"));
  }
}

/** Plaintext bytes back to the wire value a store read returns for that type (see `WireValue`). */
export function bytesToValue(bytes: Uint8Array): WireValue {
  const body = Buffer.from(bytes.buffer, bytes.byteOffset + 1, bytes.byteLength - 1);
  switch (bytes[0]) {
    case TYPE_BYTES.String:
      return body.toString("utf8");
    case TYPE_BYTES.Int32:
      return body.readInt32BE(0);
    case TYPE_BYTES.Double:
      return body.readDoubleBE(0);
    case TYPE_BYTES.Int64:
      return BigInt(body.toString("latin1"));
    case TYPE_BYTES.Boolean:
      return body[0] === 1;
    case TYPE_BYTES.DateTime:
      return new Date(body.toString("latin1"));
    case TYPE_BYTES.Guid:
      return { type: "Guid", value: body.toString("utf8") };
    case TYPE_BYTES.Binary:
      return new Uint8Array(body);
    default:
      throw new RangeError(`unknown plaintext type byte ${String(bytes[0])}`);
  }
}

function tagged(type: EdmType, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(body.byteLength + 1);
  out[0] = TYPE_BYTES[type];
  out.set(body, 1);
  return out;
}

function int32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeInt32BE(value, 0);
  return out;
}

function float64(value: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeDoubleBE(value, 0);
  return out;
}
