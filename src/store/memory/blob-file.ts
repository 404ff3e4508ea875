import * as fs from "node:fs";
import * as path from "node:path";
import { StoreError } from "../../errors.js";

/** One stored blob of a `MemoryStore`. */
export interface MemoryBlob {
  readonly data: Uint8Array;
  readonly createdOn: Date;
}

/** One line of the blob file: a put (with the bytes in base64), a delete, or a container's deletion (`n` absent). */
interface BlobLine {
  c: string;
  n?: string;
  /** Creation time in ms; absent on a delete. */
  t?: number;
  d?: string;
}

/**
 * The blobs of a `MemoryStore` with `{ file }`, kept beside it in `<file>.blobs`: one JSON line per
 * put or delete, appended with one `appendFileSync` (a crash tears at most the last line, which is
 * ignored), compacted atomically on load like the table journal.
 */
export class BlobFile {
  readonly path: string;

  constructor(file: string) {
    this.path = `${path.resolve(file)}.blobs`;
  }

  /** The blobs in the file by container and name; `undefined` when there is no file (none was ever put). */
  read(): Map<string, Map<string, MemoryBlob>> | undefined {
    const containers = new Map<string, Map<string, MemoryBlob>>();
    let text: string;
    try {
      text = fs.readFileSync(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new StoreError(`MemoryStore: cannot read ${this.path}`, { cause: error });
    }
    const lines = text.split("\n");
    lines.pop(); // "" after the last newline, or a torn line that was never completed
    lines.forEach((line, i) => {
      if (line.trim() === "") return;
      let parsed: BlobLine;
      try {
        parsed = JSON.parse(line) as BlobLine;
      } catch (error) {
        throw new StoreError(`MemoryStore: ${this.path} is corrupt at line ${i + 1}`, { cause: error });
      }
      if (parsed.n === undefined) {
        containers.delete(parsed.c);
        return;
      }
      const blobs = containers.get(parsed.c) ?? new Map<string, MemoryBlob>();
      containers.set(parsed.c, blobs);
      if (parsed.d === undefined) blobs.delete(parsed.n);
      else
        blobs.set(parsed.n, {
          data: new Uint8Array(Buffer.from(parsed.d, "base64")),
          createdOn: new Date(parsed.t ?? 0),
        });
    });
    return containers;
  }

  /**
   * Appends a put (`blob` given), a delete, or with `name` undefined the container's deletion; on
   * failure the caller changes nothing in memory.
   */
  append(container: string, name: string | undefined, blob: MemoryBlob | undefined): void {
    const line = `${JSON.stringify(name === undefined ? { c: container } : lineOf(container, name, blob))}\n`;
    try {
      fs.mkdirSync(path.dirname(this.path), { recursive: true });
      fs.appendFileSync(this.path, line);
    } catch (error) {
      throw new StoreError(`MemoryStore: cannot append to ${this.path}`, {
        statusCode: 500,
        serviceCode: "InternalError",
        cause: error,
      });
    }
  }

  /** Atomically replaces the file with the current blobs. */
  rewrite(containers: ReadonlyMap<string, ReadonlyMap<string, MemoryBlob>>): void {
    const temp = `${this.path}.${process.pid}.tmp`;
    const fd = fs.openSync(temp, "w");
    try {
      for (const [container, blobs] of containers) {
        for (const [name, blob] of blobs)
          fs.writeSync(fd, `${JSON.stringify(lineOf(container, name, blob))}\n`);
      }
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, this.path);
  }
}

function lineOf(container: string, name: string, blob: MemoryBlob | undefined): BlobLine {
  if (blob === undefined) return { c: container, n: name };
  return { c: container, n: name, t: blob.createdOn.getTime(), d: Buffer.from(blob.data).toString("base64") };
}
