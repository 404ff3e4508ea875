import { closeSync, existsSync, openSync, readFileSync, writeSync } from "node:fs";
import { ValidationError } from "../errors.js";
import type { LineStart } from "./lines.js";

/** What a checkpoint must match to be resumed: the same input, table and mode. */
export interface CheckpointHeader {
  table: string;
  mode: string;
  input: string;
}

/** What an earlier run of the same import left: where to resume and what is already settled. */
export interface ResumeState {
  /** Every line before `start.line` is settled; the input resumes at `start.offset`. */
  start: LineStart;
  /** Lines at or after `start.line` committed or reported by the earlier run. */
  settled: Set<number>;
  /** Rows committed by the earlier runs, and lines they reported as failed. */
  imported: number;
  failed: number;
  /** The last line an earlier run may have sent: a batch up to it may be committed without a record. */
  sentThrough: number;
}

/**
 * The checkpoint of an import: an append-only file of JSON lines, each written with one `write`
 * (a killed process loses no completed write; a torn last line is ignored):
 * - `{"tablekit":"import-checkpoint","version":1,"table","mode","input"}`: the header;
 * - `{"s":N}`: lines up to N may be sent from now on (written before their batches go out);
 * - `{"c":[[a,b],…]}`: a batch committed (the service answered success), its lines as ranges;
 * - `{"f":[N]}`: a line reported as failed (written to --errors);
 * - `{"t":N,"o":O}`: every line up to N is settled; line N+1 starts at byte offset O.
 */
export class Checkpoint {
  readonly #fd: number;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /** Opens (creating) the checkpoint; the state of an earlier run, if any. */
  static open(
    path: string,
    header: CheckpointHeader,
  ): { checkpoint: Checkpoint; resume: ResumeState | undefined } {
    let resume: ResumeState | undefined;
    if (existsSync(path)) resume = readState(path, header);
    const fd = openSync(path, "a");
    const checkpoint = new Checkpoint(fd);
    if (resume === undefined) {
      checkpoint.#append({ tablekit: "import-checkpoint", version: 1, ...header });
    }
    return { checkpoint, resume };
  }

  sending(through: number): void {
    this.#append({ s: through });
  }

  committed(lines: readonly number[]): void {
    this.#append({ c: ranges(lines) });
  }

  failed(line: number): void {
    this.#append({ f: [line] });
  }

  settledThrough(line: number, offset: number): void {
    this.#append({ t: line, o: offset });
  }

  close(): void {
    closeSync(this.#fd);
  }

  #append(record: object): void {
    writeSync(this.#fd, `${JSON.stringify(record)}\n`);
  }
}

function readState(path: string, header: CheckpointHeader): ResumeState | undefined {
  const lines = readFileSync(path, "utf8").split("\n");
  const records: Array<Record<string, unknown>> = [];
  for (const text of lines) {
    if (text === "") continue;
    try {
      records.push(JSON.parse(text) as Record<string, unknown>);
    } catch {
      // A torn last line: ignore.
    }
  }
  const first = records[0];
  if (first === undefined) return undefined;
  if (first.tablekit !== "import-checkpoint" || first.version !== 1) {
    throw new ValidationError("checkpoint", `${path} is not a tablekit import checkpoint`);
  }
  for (const key of ["table", "mode", "input"] as const) {
    if (first[key] !== header[key]) {
      throw new ValidationError(
        "checkpoint",
        `${path} belongs to another import (${key} ${JSON.stringify(first[key])}, this run ${JSON.stringify(header[key])}); remove it to start over`,
      );
    }
  }
  let start: LineStart = { offset: 0, line: 1 };
  let imported = 0;
  let failed = 0;
  let sentThrough = 0;
  const settled = new Set<number>();
  for (const record of records) {
    if (typeof record.s === "number") sentThrough = Math.max(sentThrough, record.s);
    if (Array.isArray(record.c)) {
      for (const [a, b] of record.c as Array<[number, number]>) {
        imported += b - a + 1;
        for (let n = a; n <= b; n++) settled.add(n);
      }
    }
    if (Array.isArray(record.f)) {
      for (const n of record.f as number[]) {
        failed++;
        settled.add(n);
      }
    }
    if (typeof record.t === "number" && typeof record.o === "number") {
      start = { line: record.t + 1, offset: record.o };
      for (const n of settled) if (n <= record.t) settled.delete(n);
    }
  }
  return { start, settled, imported, failed, sentThrough };
}

/** Sorted line numbers as inclusive ranges: [1,2,3,7] → [[1,3],[7,7]]. */
function ranges(lines: readonly number[]): Array<[number, number]> {
  const sorted = [...lines].sort((a, b) => a - b);
  const out: Array<[number, number]> = [];
  for (const n of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && last[1] === n - 1) last[1] = n;
    else out.push([n, n]);
  }
  return out;
}
