import type { TransactionAction, WireValue } from "../store/table-store.js";

/** Multipart headers and the request line of one batch operation (measured on the SDK's requests, rounded up). */
const OPERATION_OVERHEAD_BYTES = 600;

/** Estimates the bytes one operation adds to a batch request body (JSON as UTF-8, binary as base64). */
export function estimateActionBytes(action: TransactionAction): number {
  if (action.kind === "delete")
    return OPERATION_OVERHEAD_BYTES + utf8Length(action.partitionKey) + utf8Length(action.rowKey);
  let bytes = OPERATION_OVERHEAD_BYTES + 2;
  const entity = action.entity;
  for (const name in entity) {
    const value = entity[name];
    if (value === undefined) continue;
    bytes += utf8Length(name) + 4 + valueBytes(value, name.length);
  }
  return bytes;
}

function valueBytes(value: WireValue, nameLength: number): number {
  // Typed values carry an annotation property: "name@odata.type":"Edm.Xxx",
  const annotation = nameLength + 30;
  if (value === null) return 4;
  switch (typeof value) {
    case "string":
      return jsonStringBytes(value);
    case "number":
      return 24;
    case "boolean":
      return 5;
    case "bigint":
      return 22 + annotation;
    case "object":
      if (value instanceof Date) return 30 + annotation;
      if (value instanceof Uint8Array) return Math.ceil(value.byteLength / 3) * 4 + 2 + annotation;
      return (typeof value.value === "string" ? jsonStringBytes(value.value) : 24) + annotation;
    default:
      return 24;
  }
}

function utf8Length(text: string): number {
  // Names and keys are short: counting in JS beats a call into Buffer (which counts a lone surrogate
  // as the 3 bytes of U+FFFD, as here).
  if (text.length > 64) return Buffer.byteLength(text, "utf8");
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** A JSON string's size: quotes, UTF-8 bytes, and escapes for quotes, backslashes and control characters. */
function jsonStringBytes(text: string): number {
  let bytes = 2 + utf8Length(text);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 || c === 0x5c) bytes += 1;
    else if (c < 0x20) bytes += 5;
  }
  return bytes;
}
