import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { createGunzip, createGzip } from "node:zlib";

/** One line of an input file: its number (from 1), its text, and the byte offset just after it. */
export interface InputLine {
  readonly line: number;
  readonly text: string;
  readonly end: number;
}

/** Where reading starts: a byte offset and the number of the line found there (a resumed import). */
export interface LineStart {
  offset: number;
  line: number;
}

const NEWLINE = 0x0a;

/**
 * The lines of a file (`.gz` decompressed), or of stdin for `-`, streamed. For a plain file, `from`
 * seeks to a byte offset; a compressed one is read from its start and the lines before are skipped.
 * Empty lines are counted but not yielded; a `\r` before the line break is dropped.
 */
export async function* readLines(
  path: string,
  from: LineStart = { offset: 0, line: 1 },
): AsyncGenerator<InputLine> {
  const gz = path.endsWith(".gz");
  let stream: Readable;
  let offset: number;
  let line: number;
  if (path === "-") {
    stream = process.stdin;
    offset = 0;
    line = 1;
  } else if (gz) {
    stream = createReadStream(path).pipe(createGunzip());
    offset = 0;
    line = 1;
  } else {
    stream = createReadStream(path, { start: from.offset, highWaterMark: 1 << 20 });
    offset = from.offset;
    line = from.line;
  }
  const skipBefore = gz || path === "-" ? from.line : 0;
  let rest: Buffer | undefined;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const data = rest === undefined ? chunk : Buffer.concat([rest, chunk]);
    let start = 0;
    for (let at = data.indexOf(NEWLINE, start); at >= 0; at = data.indexOf(NEWLINE, start)) {
      const bytes = at + 1 - start;
      const item = lineOf(data, start, at, line, offset + bytes);
      offset += bytes;
      if (item !== undefined && line >= skipBefore) yield item;
      line++;
      start = at + 1;
    }
    rest = start < data.length ? data.subarray(start) : undefined;
  }
  if (rest !== undefined && rest.length > 0) {
    const item = lineOf(rest, 0, rest.length, line, offset + rest.length);
    if (item !== undefined && line >= skipBefore) yield item;
  }
}

function lineOf(
  data: Buffer,
  start: number,
  end: number,
  line: number,
  after: number,
): InputLine | undefined {
  let stop = end;
  if (stop > start && data[stop - 1] === 0x0d) stop--;
  if (stop === start) return undefined;
  return { line, text: data.toString("utf8", start, stop), end: after };
}

/**
 * A line sink: a file (`.gz` compressed) or stdout for `-` / none; `write` honours back-pressure. A
 * file is written under a temporary name beside it and renamed by `close`: a run that fails (`discard`)
 * leaves no file, and an older file of that name stays as it was.
 */
export interface LineSink {
  write(text: string): Promise<void> | undefined;
  /** Finishes the output (a file gets its name). */
  close(): Promise<void>;
}

/** The sink `openSink` opens: `close` in two steps (to name several files at once), or abandoned. */
export interface OutputSink extends LineSink {
  /** Finishes writing; the file keeps its temporary name until `commit`. */
  end(): Promise<void>;
  /** Gives an ended file its name. */
  commit(): void;
  /** Abandons the output (ended or not): its temporary file is removed. */
  discard(): Promise<void>;
}

export function openSink(path: string | undefined): OutputSink {
  let target: Writable;
  let file: Writable | undefined;
  const temporary =
    path === undefined || path === "-"
      ? undefined
      : join(dirname(path), `.${basename(path)}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`);
  if (temporary === undefined) {
    target = process.stdout;
  } else {
    file = createWriteStream(temporary);
    if (path!.endsWith(".gz")) {
      const gzip = createGzip();
      gzip.pipe(file);
      target = gzip;
    } else {
      target = file;
    }
  }
  const ended = (end: () => void) => {
    if (file === undefined) return Promise.resolve();
    const closed = new Promise<void>((resolve, reject) => {
      file.once("close", resolve);
      file.once("error", reject);
    });
    end();
    return closed;
  };
  let open = true;
  const sink: OutputSink = {
    write(text) {
      if (target.write(text)) return undefined;
      return new Promise((resolve) => target.once("drain", resolve));
    },
    async end() {
      if (!open) return;
      open = false;
      await ended(() => target.end());
    },
    commit() {
      if (temporary !== undefined) renameSync(temporary, path!);
    },
    async close() {
      await sink.end();
      sink.commit();
    },
    async discard() {
      if (open) {
        open = false;
        await ended(() => {
          target.destroy();
          if (file !== target) file!.destroy();
        }).catch(() => undefined);
      }
      if (temporary !== undefined) rmSync(temporary, { force: true });
    },
  };
  return sink;
}
