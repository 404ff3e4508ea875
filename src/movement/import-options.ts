import type { ImportMode } from "./batch.js";
import type { Checkpoint, ResumeState } from "./checkpoint.js";
import type { Row } from "./typed-row.js";

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
