import { StoreError } from "../errors.js";
import { ServiceLimits } from "../util/service-limits.js";
import { BATCH_FRAME_BYTES, type ImportMode, operationBytes, operationPart } from "./batch.js";
import type { Checkpoint, ResumeState } from "./checkpoint.js";
import type { TableEndpoint } from "./endpoint.js";
import { Pacer, Slots } from "./pacing.js";
import { checkRow, entityBody, type Row, RowError, rowDifference, rowFromJson } from "./typed-row.js";

/** A line to import: from a file (text) or straight from a read (copy: row). */
export interface ImportItem {
  readonly line: number;
  /** The byte offset after the line in its file (a checkpoint resumes there). */
  readonly end: number;
  readonly text?: string;
  readonly row?: Row;
}

/** A line that was not imported, and why. */
export interface ImportFailure {
  line: number;
  reason: string;
  text: string | undefined;
  /**
   * What kind of failure, to count them by: the service's status and code (`409 EntityAlreadyExists`),
   * or `InvalidJson` / `InvalidRow` for a line refused before sending.
   */
  code: string;
  /** The row's keys, when the line could be read as a row. */
  partitionKey?: string | undefined;
  rowKey?: string | undefined;
}

/** Counters of an import, live while it runs. */
export interface ImportStats {
  /** Lines read in this run. */
  read: number;
  /** Rows written in this run (and, after a resume, by the earlier runs). */
  imported: number;
  /** Lines that failed (this run and the earlier ones). */
  failed: number;
  /** Rows found already written by an earlier run whose answer was lost (counted in `imported`). */
  recovered: number;
  /** Lines the checkpoint said were done. */
  resumed: number;
}

export interface ImportOptions {
  table: string;
  mode: ImportMode;
  /** Batches in flight at once, across partitions (default 16). */
  concurrency?: number | undefined;
  /** Rows per second at most (pacing); absent: as fast as the service answers. */
  maxRowsPerSecond?: number | undefined;
  checkpoint?: Checkpoint | undefined;
  resume?: ResumeState | undefined;
  /** Called once per failed line, in the order they fail. */
  onFailure?: ((failure: ImportFailure) => void) | undefined;
  /** @internal Lines per window (tests use small windows to reach many checkpoint states). */
  windowLines?: number | undefined;
  /** Stops reading and sending; batches in flight finish (their outcome is recorded). */
  signal?: AbortSignal | undefined;
}

interface Entry {
  line: number;
  text: string | undefined;
  rowKey: string;
  /** Kept only when there is no text to parse again (copy): memory holds windows of entries. */
  row: Row | undefined;
  part: string;
  bytes: number;
}

interface Batch {
  partitionKey: string;
  entries: Entry[];
  window: Window;
  inDoubt: boolean;
}

interface Window {
  /** A batch of it was not sent to the end (stopped): the checkpoint must not pass it. */
  incomplete: boolean;
  last: number;
  end: number;
  pending: number;
  closed: boolean;
}

/** Lines per window: batches are cut per partition within a window; a checkpoint settles whole windows. */
const WINDOW_LINES = 5_000;
const WINDOW_BYTES = 16 * 1024 * 1024;
/** Windows in flight at once (reading waits beyond it: memory stays flat). */
const MAX_WINDOWS = 3;
/** Batches an import has in flight by default (`--concurrency`). */
export const DEFAULT_IMPORT_CONCURRENCY = 16;
const MAX_BATCH_BYTES = ServiceLimits.maxTransactionBytes;

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
  const tableUrl = `${endpoint.url}/${encodeURIComponent(options.table)}`;
  const checkpoint = options.checkpoint;
  const resume = options.resume;
  if (resume !== undefined) {
    stats.imported += resume.imported;
    stats.failed += resume.failed;
  }
  const slots = new Slots(options.concurrency ?? DEFAULT_IMPORT_CONCURRENCY);
  const pacer = options.maxRowsPerSecond === undefined ? undefined : new Pacer(options.maxRowsPerSecond);
  const windows: Window[] = [];
  const tails = new Map<string, Promise<void>>();
  let fatal: unknown;
  let windowDone: (() => void) | undefined;

  const fail = (
    entry: { line: number; text: string | undefined; rowKey?: string | undefined },
    failure: { reason: string; code: string; partitionKey?: string | undefined },
  ) => {
    stats.failed++;
    checkpoint?.failed(entry.line);
    options.onFailure?.({ line: entry.line, text: entry.text, rowKey: entry.rowKey, ...failure });
  };

  const settle = () => {
    while (windows.length > 0 && windows[0]!.closed && windows[0]!.pending === 0) {
      if (windows[0]!.incomplete) break;
      const w = windows.shift()!;
      checkpoint?.settledThrough(w.last, w.end);
    }
    windowDone?.();
  };

  const commit = (batch: Batch, recovered: boolean) => {
    checkpoint?.committed(batch.entries.map((e) => e.line));
    stats.imported += batch.entries.length;
    if (recovered) stats.recovered += batch.entries.length;
  };

  const run = async (batch: Batch): Promise<void> => {
    if (fatal !== undefined || options.signal?.aborted) {
      batch.window.incomplete = true;
      return;
    }
    await slots.acquire();
    try {
      if (fatal !== undefined || options.signal?.aborted) {
        batch.window.incomplete = true;
        return;
      }
      if (pacer !== undefined) await pacer.take(batch.entries.length);
      await sendBatch(batch);
    } finally {
      slots.release();
    }
  };

  const sendBatch = async (batch: Batch): Promise<void> => {
    while (batch.entries.length > 0) {
      const outcome = await endpoint.submitBatch(batch.entries.map((e) => e.part));
      batch.inDoubt ||= outcome.maybeApplied;
      if (outcome.ok) {
        commit(batch, false);
        return;
      }
      if (options.mode === "insert" && batch.inDoubt && outcome.code === "EntityAlreadyExists") {
        // An earlier attempt may have written some of these rows (in a batch cut differently before a
        // resume): those present with exactly these values were written by it; the rest go again.
        const written = await alreadyWritten(batch);
        if (written.length > 0) {
          commit({ ...batch, entries: written }, true);
          batch.entries = batch.entries.filter((e) => !written.includes(e));
          continue;
        }
      }
      const reason = `${outcome.status} ${outcome.code}: ${outcome.message}`.trim();
      const refusal = {
        reason,
        code: `${outcome.status} ${outcome.code}`.trim(),
        partitionKey: batch.partitionKey,
      };
      if (outcome.status === 401 || outcome.status === 403 || outcome.code === "TableNotFound") {
        // Not about a line: no line of the file could be written.
        const hint =
          outcome.code === "TableNotFound" ? ` (table ${options.table}; --create-table creates it)` : "";
        throw new StoreError(`the import cannot write: ${reason}${hint}`, {
          statusCode: outcome.status,
          serviceCode: outcome.code,
        });
      }
      if (outcome.index !== undefined && outcome.index < batch.entries.length) {
        const [failed] = batch.entries.splice(outcome.index, 1);
        fail(failed!, refusal);
        continue;
      }
      if (batch.entries.length === 1) {
        fail(batch.entries[0]!, refusal);
        return;
      }
      // The service did not say which operation failed: each on its own.
      const singles = batch.entries.map((e) => ({ ...batch, entries: [e] }));
      batch.entries = [];
      for (const single of singles) await sendBatch(single);
    }
  };

  /** The entries of a batch whose rows are in the table with exactly their values. */
  const alreadyWritten = async (batch: Batch): Promise<Entry[]> => {
    const keys = batch.entries.map((e) => e.rowKey).sort();
    const found = await endpoint.rowsBetween(
      options.table,
      batch.partitionKey,
      keys[0]!,
      keys[keys.length - 1]!,
    );
    const byKey = new Map(found.map((r) => [r.rowKey, r]));
    return batch.entries.filter((e) => {
      const there = byKey.get(e.rowKey);
      return (
        there !== undefined && rowDifference(e.row ?? rowFromJson(JSON.parse(e.text!)), there) === undefined
      );
    });
  };

  const dispatch = (batch: Batch) => {
    batch.window.pending++;
    const key = batch.partitionKey;
    const previous = tails.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => run(batch))
      .catch((error: unknown) => {
        batch.window.incomplete = true;
        fatal ??= error;
      })
      .finally(() => {
        batch.window.pending--;
        if (tails.get(key) === next) tails.delete(key);
        settle();
      });
    tails.set(key, next);
  };

  options.signal?.addEventListener("abort", () => windowDone?.(), { once: true });
  // The current window: entries per partition, in line order.
  let groups = new Map<string, Entry[]>();
  let window: Window = { incomplete: false, last: 0, end: 0, pending: 0, closed: false };
  let windowLines = 0;
  let windowBytes = 0;

  const closeWindow = () => {
    if (windowLines === 0) return;
    windows.push(window);
    checkpoint?.sending(window.last);
    for (const [partitionKey, entries] of groups) {
      for (const chunk of cut(entries)) {
        const inDoubt = resume !== undefined && chunk[0]!.line <= resume.sentThrough;
        dispatch({ partitionKey, entries: chunk, window, inDoubt });
      }
    }
    window.closed = true;
    groups = new Map();
    window = { incomplete: false, last: 0, end: 0, pending: 0, closed: false };
    windowLines = 0;
    windowBytes = 0;
    settle();
  };

  for await (const item of items) {
    if (fatal !== undefined || options.signal?.aborted) break;
    window.last = item.line;
    window.end = item.end;
    windowLines++;
    if (resume?.settled.has(item.line)) {
      stats.resumed++;
      continue;
    }
    stats.read++;
    let row: Row | undefined = item.row;
    try {
      row ??= rowFromJson(parseJson(item.text ?? ""));
      checkRow(row);
    } catch (error) {
      if (!(error instanceof RowError)) throw error;
      const code = row === undefined && error instanceof JsonError ? "InvalidJson" : "InvalidRow";
      fail(
        { line: item.line, text: item.text, rowKey: row?.rowKey },
        { reason: error.message, code, partitionKey: row?.partitionKey },
      );
      continue;
    }
    const part = operationPart(tableUrl, options.mode, row.partitionKey, row.rowKey, entityBody(row));
    const entry: Entry = {
      line: item.line,
      text: item.text,
      rowKey: row.rowKey,
      row: item.text === undefined ? row : undefined,
      part,
      bytes: operationBytes(part),
    };
    let group = groups.get(row.partitionKey);
    if (group === undefined) {
      group = [];
      groups.set(row.partitionKey, group);
    }
    group.push(entry);
    windowBytes += entry.bytes;
    if (windowLines >= (options.windowLines ?? WINDOW_LINES) || windowBytes >= WINDOW_BYTES) {
      closeWindow();
      while (windows.length >= MAX_WINDOWS && fatal === undefined && !options.signal?.aborted) {
        await new Promise<void>((resolve) => {
          windowDone = resolve;
        });
        windowDone = undefined;
      }
    }
  }
  if (fatal === undefined && !options.signal?.aborted) closeWindow();
  else windowLines = 0;
  await Promise.all([...tails.values()]);
  settle();
  if (fatal !== undefined) throw fatal;
  return stats;
}

export function newStats(): ImportStats {
  return { read: 0, imported: 0, failed: 0, recovered: 0, resumed: 0 };
}

/** A line that is not JSON at all. */
class JsonError extends RowError {}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new JsonError(`malformed JSON (${(error as Error).message})`);
  }
}

/** A partition's entries as batches: at most 100 operations, 4 MiB of body, and each RowKey once. */
function cut(entries: readonly Entry[]): Entry[][] {
  const batches: Entry[][] = [];
  let current: Entry[] = [];
  let bytes = BATCH_FRAME_BYTES;
  let keys = new Set<string>();
  for (const entry of entries) {
    if (
      current.length >= ServiceLimits.maxTransactionOperations ||
      bytes + entry.bytes > MAX_BATCH_BYTES ||
      keys.has(entry.rowKey)
    ) {
      batches.push(current);
      current = [];
      bytes = BATCH_FRAME_BYTES;
      keys = new Set();
    }
    current.push(entry);
    bytes += entry.bytes;
    keys.add(entry.rowKey);
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
