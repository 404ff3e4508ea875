import type { ImportFailure } from "../movement/import.js";

/** Failures printed one by one before only counting them. */
const SHOWN = 10;

/**
 * Reports the rows an import or copy could not write, on stderr and bounded: the first few, each by
 * its line and keys, then (`finish`) how many more and the counts by error code. 5,000 refused rows
 * are a dozen lines, not 5,000.
 */
export class FailureReport {
  readonly #prefix: string;
  readonly #input: { file: string } | { table: string };
  readonly #byCode = new Map<string, number>();
  #count = 0;

  /** `input`: a file (a failure is named by its line and keys) or, for a copy, the source table (keys only). */
  constructor(prefix: string, input: { file: string } | { table: string }) {
    this.#prefix = prefix;
    this.#input = input;
  }

  add(failure: ImportFailure): void {
    this.#count++;
    this.#byCode.set(failure.code, (this.#byCode.get(failure.code) ?? 0) + 1);
    if (this.#count > SHOWN) return;
    const where: string[] = [];
    where.push("file" in this.#input ? `${this.#input.file} line ${failure.line}` : this.#input.table);
    if (failure.partitionKey !== undefined) where.push(`PartitionKey '${failure.partitionKey}'`);
    if (failure.rowKey !== undefined) where.push(`RowKey '${failure.rowKey}'`);
    process.stderr.write(`${this.#prefix}: ${where.join(", ")}: ${failure.reason}\n`);
  }

  /** The rest, counted: how many were not shown, and how many of each code (when there is more than one line to count). */
  finish(): void {
    if (this.#count <= SHOWN && this.#byCode.size <= 1) return;
    if (this.#count > SHOWN) {
      process.stderr.write(`${this.#prefix}: … and ${(this.#count - SHOWN).toLocaleString("en-US")} more\n`);
    }
    const counts = [...this.#byCode]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([code, n]) => `${code} (${n.toLocaleString("en-US")})`);
    process.stderr.write(`${this.#prefix}: failed by code: ${counts.join(", ")}\n`);
  }
}
