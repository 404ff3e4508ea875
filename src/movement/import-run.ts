import { StoreError } from "../errors.js";
import { ServiceLimits } from "../util/service-limits.js";
import { BATCH_FRAME_BYTES, operationBytes, operationPart } from "./batch.js";
import type { BatchOutcome, TableEndpoint } from "./endpoint.js";
import type { ImportItem, ImportOptions, ImportStats } from "./import-options.js";
import { Pacer, Slots } from "./pacing.js";
import { checkRow, entityBody, type Row, RowError, rowDifference, rowFromJson } from "./typed-row.js";

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

const newWindow = (): Window => ({ incomplete: false, last: 0, end: 0, pending: 0, closed: false });

/**
 * One import in progress (`importItems`): lines are read into a window, grouped per partition; a full
 * window is cut into batches, sent per partition in order and partitions in parallel; the checkpoint
 * settles whole windows once all their batches are done.
 */
export class ImportRun {
  readonly #endpoint: TableEndpoint;
  readonly #options: ImportOptions;
  readonly #stats: ImportStats;
  readonly #tableUrl: string;
  readonly #slots: Slots;
  readonly #pacer: Pacer | undefined;
  /** Windows closed and not yet settled, oldest first. */
  readonly #windows: Window[] = [];
  /** Per partition, the last batch sent or queued (a partition's batches go in line order). */
  readonly #tails = new Map<string, Promise<void>>();
  #fatal: unknown;
  #windowDone: (() => void) | undefined;
  // The current window: entries per partition, in line order.
  #groups = new Map<string, Entry[]>();
  #window = newWindow();
  #windowLines = 0;
  #windowBytes = 0;

  constructor(endpoint: TableEndpoint, options: ImportOptions, stats: ImportStats) {
    this.#endpoint = endpoint;
    this.#options = options;
    this.#stats = stats;
    this.#tableUrl = `${endpoint.url}/${encodeURIComponent(options.table)}`;
    if (options.resume !== undefined) {
      stats.imported += options.resume.imported;
      stats.failed += options.resume.failed;
    }
    this.#slots = new Slots(options.concurrency ?? DEFAULT_IMPORT_CONCURRENCY);
    this.#pacer = options.maxRowsPerSecond === undefined ? undefined : new Pacer(options.maxRowsPerSecond);
    options.signal?.addEventListener("abort", () => this.#windowDone?.(), { once: true });
  }

  /** A batch failed beyond a line's fault, or the import was aborted: nothing more is read or sent. */
  get stopped(): boolean {
    return this.#fatal !== undefined || this.#options.signal?.aborted === true;
  }

  /** Adds a line to the current window; a full window is sent, and reading waits while too many are in flight. */
  async take(item: ImportItem): Promise<void> {
    this.#window.last = item.line;
    this.#window.end = item.end;
    this.#windowLines++;
    if (this.#options.resume?.settled.has(item.line)) {
      this.#stats.resumed++;
      return;
    }
    this.#stats.read++;
    const entry = this.#entryOf(item);
    if (entry === undefined) return;
    let group = this.#groups.get(entry.partitionKey);
    if (group === undefined) {
      group = [];
      this.#groups.set(entry.partitionKey, group);
    }
    group.push(entry.entry);
    this.#windowBytes += entry.entry.bytes;
    if (
      this.#windowLines >= (this.#options.windowLines ?? WINDOW_LINES) ||
      this.#windowBytes >= WINDOW_BYTES
    ) {
      this.#closeWindow();
      await this.#waitForRoom();
    }
  }

  /** Sends the last window (unless stopped), waits for every batch, and throws what stopped the import. */
  async finish(): Promise<ImportStats> {
    if (!this.stopped) this.#closeWindow();
    else this.#windowLines = 0;
    await Promise.all([...this.#tails.values()]);
    this.#settle();
    if (this.#fatal !== undefined) throw this.#fatal;
    return this.#stats;
  }

  /** The line as an operation to send, or undefined when it is refused before sending (reported). */
  #entryOf(item: ImportItem): { partitionKey: string; entry: Entry } | undefined {
    let row: Row | undefined = item.row;
    try {
      row ??= rowFromJson(parseJson(item.text ?? ""));
      checkRow(row);
    } catch (error) {
      if (!(error instanceof RowError)) throw error;
      const code = row === undefined && error instanceof JsonError ? "InvalidJson" : "InvalidRow";
      this.#fail(
        { line: item.line, text: item.text, rowKey: row?.rowKey },
        { reason: error.message, code, partitionKey: row?.partitionKey },
      );
      return undefined;
    }
    const part = operationPart(
      this.#tableUrl,
      this.#options.mode,
      row.partitionKey,
      row.rowKey,
      entityBody(row),
    );
    const entry: Entry = {
      line: item.line,
      text: item.text,
      rowKey: row.rowKey,
      row: item.text === undefined ? row : undefined,
      part,
      bytes: operationBytes(part),
    };
    return { partitionKey: row.partitionKey, entry };
  }

  /** Cuts the current window into batches and sends them; a new window begins. */
  #closeWindow(): void {
    if (this.#windowLines === 0) return;
    const window = this.#window;
    const resume = this.#options.resume;
    this.#windows.push(window);
    this.#options.checkpoint?.sending(window.last);
    for (const [partitionKey, entries] of this.#groups) {
      for (const chunk of cut(entries)) {
        const inDoubt = resume !== undefined && chunk[0]!.line <= resume.sentThrough;
        this.#dispatch({ partitionKey, entries: chunk, window, inDoubt });
      }
    }
    window.closed = true;
    this.#groups = new Map();
    this.#window = newWindow();
    this.#windowLines = 0;
    this.#windowBytes = 0;
    this.#settle();
  }

  /** Reading waits while MAX_WINDOWS windows are unsettled (memory stays flat). */
  async #waitForRoom(): Promise<void> {
    while (this.#windows.length >= MAX_WINDOWS && !this.stopped) {
      await new Promise<void>((resolve) => {
        this.#windowDone = resolve;
      });
      this.#windowDone = undefined;
    }
  }

  /** Queues a batch behind its partition's previous one; a failure beyond a line's stops the import. */
  #dispatch(batch: Batch): void {
    batch.window.pending++;
    const key = batch.partitionKey;
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => this.#run(batch))
      .catch((error: unknown) => {
        batch.window.incomplete = true;
        this.#fatal ??= error;
      })
      .finally(() => {
        batch.window.pending--;
        if (this.#tails.get(key) === next) this.#tails.delete(key);
        this.#settle();
      });
    this.#tails.set(key, next);
  }

  /** Sends a batch within the concurrency slots and the pace, unless the import stopped meanwhile. */
  async #run(batch: Batch): Promise<void> {
    if (this.stopped) {
      batch.window.incomplete = true;
      return;
    }
    await this.#slots.acquire();
    try {
      if (this.stopped) {
        batch.window.incomplete = true;
        return;
      }
      if (this.#pacer !== undefined) await this.#pacer.take(batch.entries.length);
      await this.#send(batch);
    } finally {
      this.#slots.release();
    }
  }

  /** Sends a batch until each of its lines is written or reported. */
  async #send(batch: Batch): Promise<void> {
    while (batch.entries.length > 0) {
      const outcome = await this.#endpoint.submitBatch(batch.entries.map((e) => e.part));
      batch.inDoubt ||= outcome.maybeApplied;
      if (outcome.ok) {
        this.#commit(batch, false);
        return;
      }
      if (this.#options.mode === "insert" && batch.inDoubt && outcome.code === "EntityAlreadyExists") {
        // An earlier attempt may have written some of these rows (in a batch cut differently before a
        // resume): those present with exactly these values were written by it; the rest go again.
        const written = await this.#alreadyWritten(batch);
        if (written.length > 0) {
          this.#commit({ ...batch, entries: written }, true);
          batch.entries = batch.entries.filter((e) => !written.includes(e));
          continue;
        }
      }
      const refusal = this.#refusal(outcome, batch.partitionKey);
      if (outcome.index !== undefined && outcome.index < batch.entries.length) {
        const [failed] = batch.entries.splice(outcome.index, 1);
        this.#fail(failed!, refusal);
        continue;
      }
      if (batch.entries.length === 1) {
        this.#fail(batch.entries[0]!, refusal);
        return;
      }
      // The service did not say which operation failed: each on its own.
      const singles = batch.entries.map((e) => ({ ...batch, entries: [e] }));
      batch.entries = [];
      for (const single of singles) await this.#send(single);
    }
  }

  /** A refused batch's failure to report; throws when no line of the file could be written. */
  #refusal(
    outcome: Extract<BatchOutcome, { ok: false }>,
    partitionKey: string,
  ): { reason: string; code: string; partitionKey: string } {
    const reason = `${outcome.status} ${outcome.code}: ${outcome.message}`.trim();
    if (outcome.status === 401 || outcome.status === 403 || outcome.code === "TableNotFound") {
      // Not about a line: no line of the file could be written.
      const hint =
        outcome.code === "TableNotFound" ? ` (table ${this.#options.table}; --create-table creates it)` : "";
      throw new StoreError(`the import cannot write: ${reason}${hint}`, {
        statusCode: outcome.status,
        serviceCode: outcome.code,
      });
    }
    return { reason, code: `${outcome.status} ${outcome.code}`.trim(), partitionKey };
  }

  /** The entries of a batch whose rows are in the table with exactly their values. */
  async #alreadyWritten(batch: Batch): Promise<Entry[]> {
    const keys = batch.entries.map((e) => e.rowKey).sort();
    const found = await this.#endpoint.rowsBetween(
      this.#options.table,
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
  }

  #commit(batch: Batch, recovered: boolean): void {
    this.#options.checkpoint?.committed(batch.entries.map((e) => e.line));
    this.#stats.imported += batch.entries.length;
    if (recovered) this.#stats.recovered += batch.entries.length;
  }

  #fail(
    entry: { line: number; text: string | undefined; rowKey?: string | undefined },
    failure: { reason: string; code: string; partitionKey?: string | undefined },
  ): void {
    this.#stats.failed++;
    this.#options.checkpoint?.failed(entry.line);
    this.#options.onFailure?.({ line: entry.line, text: entry.text, rowKey: entry.rowKey, ...failure });
  }

  /** Settles, in order, the windows whose batches are all done (the checkpoint advances past them). */
  #settle(): void {
    const windows = this.#windows;
    while (windows.length > 0 && windows[0]!.closed && windows[0]!.pending === 0) {
      if (windows[0]!.incomplete) break;
      const w = windows.shift()!;
      this.#options.checkpoint?.settledThrough(w.last, w.end);
    }
    this.#windowDone?.();
  }
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
