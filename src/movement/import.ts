import type { TableEndpoint } from "./endpoint.js";
import type { ImportItem, ImportOptions, ImportStats } from "./import-options.js";
import { ImportRun } from "./import-run.js";

export type { ImportFailure, ImportItem, ImportOptions, ImportStats } from "./import-options.js";

/** Batches an import has in flight by default (`--concurrency`). */
export { DEFAULT_IMPORT_CONCURRENCY } from "./import-run.js";

/**
 * Imports lines into a table with entity group transactions: per partition, up to 100 operations and
 * at most 4 MiB of body per batch; partitions in parallel. A line that cannot be parsed, breaks a
 * service rule or is refused by the service is reported (`onFailure`) and the rest goes on.
 *
 * Resume: see checkpoint.ts and docs/data-movement.md. A batch whose answer may have been lost (an
 * earlier run sent it; or a connection failed mid-request) is "in doubt": resent as is, which is
 * harmless for upsert and replace; in insert mode it fails with EntityAlreadyExists if it was
 * applied, and then its rows are read back: a row present with exactly the line's values was written
 * by the earlier attempt (counted once, as recovered); the others are sent again, and a row present
 * with other values is a conflict, reported as usual.
 */
export async function importItems(
  endpoint: TableEndpoint,
  items: AsyncIterable<ImportItem>,
  options: ImportOptions,
  stats: ImportStats = newStats(),
): Promise<ImportStats> {
  const run = new ImportRun(endpoint, options, stats);
  for await (const item of items) {
    if (run.stopped) break;
    await run.take(item);
  }
  return run.finish();
}

export function newStats(): ImportStats {
  return { read: 0, imported: 0, failed: 0, recovered: 0, resumed: 0 };
}
