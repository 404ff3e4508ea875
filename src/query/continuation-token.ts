import { ValidationError } from "../errors.js";
import type { StoreContinuation } from "../wire/wire-entity.js";

/** Where a paged query resumes, plus how many results `take` still allows. */
export interface ContinuationState {
  store: StoreContinuation;
  remaining?: number;
}

interface TokenBody {
  v: 1;
  q: string;
  p: string;
  r?: string;
  n?: number;
}

/** Encodes an opaque, storable continuation string bound to the query it came from. */
export function encodeContinuation(state: ContinuationState, queryFingerprint: string): string {
  const body: TokenBody = { v: 1, q: queryFingerprint, p: state.store.nextPartitionKey };
  if (state.store.nextRowKey !== undefined) body.r = state.store.nextRowKey;
  if (state.remaining !== undefined) body.n = state.remaining;
  return Buffer.from(JSON.stringify(body), "utf8").toString("base64url");
}

/** Decodes a continuation string; `ValidationError` if it is malformed or belongs to another query. */
export function decodeContinuation(token: string, queryFingerprint: string): ContinuationState {
  let body: Partial<TokenBody>;
  try {
    body = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Partial<TokenBody>;
  } catch (error) {
    throw new ValidationError("continuation", "The continuation token is malformed", {
      field: "continuation",
      cause: error,
    });
  }
  if (
    body?.v !== 1 ||
    typeof body.p !== "string" ||
    (body.r !== undefined && typeof body.r !== "string") ||
    (body.n !== undefined && (!Number.isSafeInteger(body.n) || body.n < 1))
  ) {
    throw new ValidationError("continuation", "The continuation token is malformed", {
      field: "continuation",
    });
  }
  if (body.q !== queryFingerprint) {
    throw new ValidationError("continuation", "The continuation token belongs to a different query", {
      field: "continuation",
    });
  }
  const store: StoreContinuation = { nextPartitionKey: body.p };
  if (body.r !== undefined) store.nextRowKey = body.r;
  return body.n === undefined ? { store } : { store, remaining: body.n };
}

/** A short, stable fingerprint of a query's table, filter and projection (FNV-1a, 32-bit). */
export function fingerprintQuery(
  table: string,
  filter: string,
  select: readonly string[] | undefined,
): string {
  const text = `${table}\u0000${filter}\u0000${select?.join(",") ?? "*"}`;
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}
