import { ValidationError } from "../errors.js";
import type { StoreContinuation } from "../wire/wire-entity.js";

/** Where one bucket of a merged fan-out resumes: not started, done, or after the last RowKey returned. */
export type BucketPosition = { readonly after?: string; readonly done?: boolean };

/**
 * Where a fan-out read resumes: `merged` (sorted stores) holds each bucket's position; `sequential`
 * (unsorted stores, which read the buckets one after another) holds the bucket and its store continuation.
 */
export type FanOutState =
  | { kind: "merged"; buckets: BucketPosition[]; remaining?: number }
  | { kind: "sequential"; bucket: number; store?: StoreContinuation; remaining?: number };

interface TokenBody {
  v: 1;
  f: true;
  q: string;
  /** merged: per bucket, 0 = not started, 1 = done, a string = the last RowKey returned. */
  b?: Array<0 | 1 | string>;
  /** sequential: [bucket, nextPartitionKey?, nextRowKey?]. */
  s?: [number, string?, string?];
  n?: number;
}

/** Encodes a fan-out position as one opaque, storable continuation bound to its query. */
export function encodeFanOutContinuation(state: FanOutState, fingerprint: string): string {
  const body: TokenBody = { v: 1, f: true, q: fingerprint };
  if (state.kind === "merged") {
    body.b = state.buckets.map((p) => (p.done ? 1 : p.after === undefined ? 0 : p.after));
  } else {
    body.s =
      state.store === undefined
        ? [state.bucket]
        : state.store.nextRowKey === undefined
          ? [state.bucket, state.store.nextPartitionKey]
          : [state.bucket, state.store.nextPartitionKey, state.store.nextRowKey];
  }
  if (state.remaining !== undefined) body.n = state.remaining;
  return Buffer.from(JSON.stringify(body), "utf8").toString("base64url");
}

/** Decodes a fan-out continuation; `ValidationError` if malformed, or from another query or store order. */
export function decodeFanOutContinuation(
  token: string,
  fingerprint: string,
  buckets: number,
  kind: FanOutState["kind"],
): FanOutState {
  const malformed = (cause?: unknown): ValidationError =>
    new ValidationError("continuation", "The continuation token is malformed", {
      field: "continuation",
      ...(cause === undefined ? {} : { cause }),
    });
  let body: Partial<TokenBody>;
  try {
    body = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Partial<TokenBody>;
  } catch (error) {
    throw malformed(error);
  }
  if (body?.v !== 1 || body.f !== true || typeof body.q !== "string") throw malformed();
  if (body.q !== fingerprint) {
    throw new ValidationError("continuation", "The continuation token belongs to a different query", {
      field: "continuation",
    });
  }
  if (body.n !== undefined && (!Number.isSafeInteger(body.n) || body.n < 1)) throw malformed();
  const remaining = body.n === undefined ? {} : { remaining: body.n };
  if (kind === "merged") {
    const b = body.b;
    if (!Array.isArray(b) || b.length !== buckets) throw malformed();
    const positions = b.map((p): BucketPosition => {
      if (p === 0) return {};
      if (p === 1) return { done: true };
      if (typeof p === "string") return { after: p };
      throw malformed();
    });
    return { kind, buckets: positions, ...remaining };
  }
  const s = body.s;
  if (!Array.isArray(s) || !Number.isInteger(s[0]) || s[0] < 0 || s[0] >= buckets) throw malformed();
  const [bucket, p, r] = s;
  if ((p !== undefined && typeof p !== "string") || (r !== undefined && typeof r !== "string"))
    throw malformed();
  if (p === undefined) return { kind, bucket, ...remaining };
  const store: StoreContinuation =
    r === undefined ? { nextPartitionKey: p } : { nextPartitionKey: p, nextRowKey: r };
  return { kind, bucket, store, ...remaining };
}
