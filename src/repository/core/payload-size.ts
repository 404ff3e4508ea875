import {
  BATCH_ENVELOPE_BYTES,
  batchBodyBytes,
  batchBodyBytesOver,
  batchOperationBytes,
  batchTableUrlFor,
} from "../../store/batch-body-size.js";
import type { TransactionAction } from "../../store/table-store.js";
import { AZURE_TABLE_LIMITS, type StoreLimits } from "../../util/store-limits.js";

export { BATCH_ENVELOPE_BYTES, batchBodyBytes, batchBodyBytesOver };

/**
 * The exact bytes one operation adds to the `$batch` request body the SDK sends (its MIME part, the
 * request line with the account URL and percent-encoded keys, headers, JSON): see
 * src/store/batch-body-size.ts. A batch's body is `BATCH_ENVELOPE_BYTES` plus this for each operation.
 * Without `table`, the longest table name is assumed; without `limits`, Azure Table storage on the
 * nominal account URL (so the count is an upper bound for any standard endpoint).
 */
export function estimateActionBytes(
  action: TransactionAction,
  limits: StoreLimits = AZURE_TABLE_LIMITS,
  table?: string,
): number {
  return batchOperationBytes(batchTableUrlFor(limits, table), action);
}
