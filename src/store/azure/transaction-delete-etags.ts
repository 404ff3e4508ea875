import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { StoreError, ValidationError } from "../../errors.js";

/**
 * `TableClient.submitTransaction` drops the options of a "delete" action (TableClient.js passes only
 * partitionKey and rowKey on), so every delete in a transaction goes out with `If-Match: *`. tablekit
 * needs conditional deletes, so this pipeline policy rewrites the assembled `$batch` body: the
 * sub-request of each conditional delete gets its ETag. It is keyed by the call's AbortSignal (one per
 * call), checks every assumption about the body, and fails the request rather than send an
 * unconditional delete by mistake.
 */

interface PendingDeletes {
  /** Number of operations in the transaction (one sub-request each, in order). */
  operations: number;
  /** ETag per operation index, for the conditional deletes only. */
  etags: ReadonlyMap<number, string>;
}

// Keyed by the request's abort signal object (typed `AbortSignalLike` in the pipeline).
const pending = new WeakMap<object, PendingDeletes>();

/** Registers the ETags the `$batch` request sent with `signal` must carry on its delete sub-requests. */
export function expectDeleteEtags(
  signal: AbortSignal,
  operations: number,
  etags: ReadonlyMap<number, string>,
): void {
  for (const etag of etags.values()) {
    // The ETag is pasted into a raw multipart body: a line break would inject headers.
    if (/[\r\n]/.test(etag))
      throw new ValidationError("etag", "An ETag must not contain line breaks", { field: "ifMatch" });
  }
  pending.set(signal, { operations, etags });
}

/** True while the ETags registered for `signal` have not been written into a request yet. */
export function deleteEtagsPending(signal: AbortSignal): boolean {
  return pending.has(signal);
}

/**
 * The policy to add to every `TableClient` pipeline that submits transactions, in the "Serialize"
 * phase: before the account-key policy, which fixes Content-Length from the body it sees.
 */
export const transactionDeleteEtagPolicy: PipelinePolicy = {
  name: "tablekitTransactionDeleteEtags",
  sendRequest(request, next) {
    const signal = request.abortSignal;
    const expected = signal ? pending.get(signal) : undefined;
    if (signal && expected && typeof request.body === "string" && request.url.includes("$batch")) {
      request.body = applyDeleteEtags(request.body, expected);
      // The account-key policy sets Content-Length from the body; keep it true if it already ran.
      if (request.headers.has("Content-Length")) {
        request.headers.set("Content-Length", Buffer.byteLength(request.body));
      }
      // Consumed: a retry of the same request object must not rewrite the body twice.
      pending.delete(signal);
    }
    return next(request);
  },
};

/** Writes each expected ETag into the `If-Match: *` header of its delete sub-request. */
export function applyDeleteEtags(body: string, expected: PendingDeletes): string {
  const boundary = /boundary=(changeset_[^\r\n;]+)/.exec(body)?.[1];
  if (boundary === undefined) throw new StoreError("Transaction body has no changeset boundary");
  // parts[0] is the batch preamble; parts[i + 1] is the sub-request of operation i.
  const parts = body.split(`--${boundary}\r\n`);
  if (parts.length - 1 !== expected.operations) {
    throw new StoreError(
      `Transaction body has ${parts.length - 1} sub-requests, expected ${expected.operations}`,
    );
  }
  for (const [index, etag] of expected.etags) {
    const part = parts[index + 1] ?? "";
    const header = "\r\nIf-Match: *\r\n";
    const at = part.indexOf(header);
    if (!/\r\nDELETE /.test(part) || at < 0 || part.indexOf(header, at + 1) >= 0) {
      throw new StoreError(`Transaction operation ${index} is not the expected delete sub-request`);
    }
    parts[index + 1] = `${part.slice(0, at)}\r\nIf-Match: ${etag}\r\n${part.slice(at + header.length)}`;
  }
  return parts.join(`--${boundary}\r\n`);
}
