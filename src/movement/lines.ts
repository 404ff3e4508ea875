import { createReadStream, createWriteStream } from "node:fs";
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

/** A line sink: a file (`.gz` compressed) or stdout for `-` / none; `write` honours back-pressure. */
export interface LineSink {
  write(text: string): Promise<void> | undefined;
  close(): Promise<void>;
}

export function openSink(path: string | undefined): LineSink {
  let target: Writable;
  let file: Writable | undefined;
  if (path === undefined || path === "-") {
    target = process.stdout;
  } else {
    file = createWriteStream(path);
    if (path.endsWith(".gz")) {
      const gzip = createGzip();
      gzip.pipe(file);
      target = gzip;
    } else {
      target = file;
    }
  }
  return {
    write(text) {
      if (target.write(text)) return undefined;
      return new Promise((resolve) => target.once("drain", resolve));
    },
    close() {
      if (file === undefined) return Promise.resolve();
      const closed = new Promise<void>((resolve, reject) => {
        file.once("close", resolve);
        file.once("error", reject);
      });
      target.end();
      return closed;
    },
  };
}
