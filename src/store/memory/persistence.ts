import * as fs from "node:fs";
import * as path from "node:path";
import { StoreError } from "../../errors.js";
import type { Mutation } from "./mutation.js";
import { decodeMutation, type EncodedMutation, encodeMutation } from "./record-codec.js";

/** One committed request: the clock's Timestamp at commit time and its mutations, applied together. */
export interface JournalCommit {
  readonly ts: bigint;
  readonly mutations: readonly Mutation[];
}

interface JournalLine {
  ts: string;
  m: EncodedMutation[];
}

/**
 * The MemoryStore's file: one JSON line per committed request, appended with a single
 * `appendFileSync`, so a crash leaves at most one torn last line (no trailing newline), which
 * `read` ignores. `rewrite` compacts the file atomically (write a temp file, fsync, rename).
 */
export class Journal {
  readonly path: string;

  constructor(file: string) {
    this.path = path.resolve(file);
  }

  /** The commits in the file, in order; `undefined` when the file does not exist. */
  read(): JournalCommit[] | undefined {
    let text: string;
    try {
      text = fs.readFileSync(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new StoreError(`MemoryStore: cannot read ${this.path}`, { cause: error });
    }
    const lines = text.split("\n");
    lines.pop(); // "" after the last newline, or a torn line that was never completed: not committed
    const commits: JournalCommit[] = [];
    lines.forEach((line, i) => {
      if (line.trim() === "") return;
      try {
        const parsed = JSON.parse(line) as JournalLine;
        commits.push({ ts: BigInt(parsed.ts), mutations: parsed.m.map(decodeMutation) });
      } catch (error) {
        throw new StoreError(`MemoryStore: ${this.path} is corrupt at line ${i + 1}`, { cause: error });
      }
    });
    return commits;
  }

  /** Appends one commit as one line; on failure nothing may be applied in memory (the caller's rule). */
  append(commit: JournalCommit): void {
    const line = `${encodeLine(commit)}\n`;
    try {
      fs.appendFileSync(this.path, line);
    } catch (error) {
      let failure = error;
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
        try {
          fs.mkdirSync(path.dirname(this.path), { recursive: true });
          fs.appendFileSync(this.path, line);
          return;
        } catch (retryError) {
          failure = retryError;
        }
      }
      throw new StoreError(`MemoryStore: cannot append to ${this.path}`, {
        statusCode: 500,
        serviceCode: "InternalError",
        cause: failure,
      });
    }
  }

  /** Atomically replaces the file with `commits` (which also drops a torn last line). */
  rewrite(commits: Iterable<JournalCommit>): void {
    const temp = `${this.path}.${process.pid}.tmp`;
    const fd = fs.openSync(temp, "w");
    try {
      let chunk = "";
      for (const commit of commits) {
        chunk += `${encodeLine(commit)}\n`;
        if (chunk.length > 1 << 20) {
          fs.writeSync(fd, chunk);
          chunk = "";
        }
      }
      if (chunk !== "") fs.writeSync(fd, chunk);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, this.path);
  }
}

function encodeLine(commit: JournalCommit): string {
  const line: JournalLine = { ts: commit.ts.toString(), m: commit.mutations.map(encodeMutation) };
  return JSON.stringify(line);
}
