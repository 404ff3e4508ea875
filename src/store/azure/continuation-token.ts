import type { StoreContinuation } from "../table-store.js";

/**
 * `@azure/data-tables` packs the service's NextPartitionKey/NextRowKey into one opaque token:
 * base64 of `JSON.stringify({ nextPartitionKey, nextRowKey? })`, UTF-8 encoded (utils/continuationToken.js).
 * Its decoder however maps each byte to one character (Latin-1), so any non-ASCII character would
 * come back mangled. Encoding with `\uXXXX` escapes keeps the JSON pure ASCII, so the round trip is exact.
 */

/** Converts a port continuation into the SDK's `continuationToken` string. */
export function toSdkContinuationToken(continuation: StoreContinuation): string {
  const token: StoreContinuation = { nextPartitionKey: continuation.nextPartitionKey };
  // The SDK omits an empty or absent NextRowKey; mirror it.
  if (continuation.nextRowKey) token.nextRowKey = continuation.nextRowKey;
  return Buffer.from(asciiJson(token), "latin1").toString("base64");
}

/** Converts the SDK's `continuationToken` (absent on the last page) back into a port continuation. */
export function fromSdkContinuationToken(token: string | undefined): StoreContinuation | undefined {
  if (!token) return undefined;
  const parsed = JSON.parse(Buffer.from(token, "base64").toString("utf8")) as {
    nextPartitionKey?: unknown;
    nextRowKey?: unknown;
  };
  if (typeof parsed.nextPartitionKey !== "string") return undefined;
  const continuation: StoreContinuation = { nextPartitionKey: parsed.nextPartitionKey };
  if (typeof parsed.nextRowKey === "string" && parsed.nextRowKey !== "") {
    continuation.nextRowKey = parsed.nextRowKey;
  }
  return continuation;
}

function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
