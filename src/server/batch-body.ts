import { badRequest } from "./service-error.js";

/** One operation of a `$batch` changeset: its HTTP request as the client wrote it. */
export interface BatchOperation {
  readonly method: string;
  /** The absolute or relative URL of the request line. */
  readonly url: string;
  /** Header names in lower case. */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
  /** One header's value (the last one given), by lower-case name. */
  header(name: string): string | undefined;
}

/**
 * An operation whose header lines were checked when the body was parsed, but are collected into a
 * map only when asked for: a changeset operation needs only If-Match, read straight from the text.
 */
class ParsedOperation implements BatchOperation {
  readonly method: string;
  readonly url: string;
  readonly body: string;
  readonly #text: string;
  readonly #headersAt: number;
  readonly #ifMatch: string | undefined;
  #headers: Map<string, string> | undefined;

  constructor(
    method: string,
    url: string,
    body: string,
    text: string,
    headersAt: number,
    ifMatch: string | undefined,
  ) {
    this.method = method;
    this.url = url;
    this.body = body;
    this.#text = text;
    this.#headersAt = headersAt;
    this.#ifMatch = ifMatch;
  }

  get headers(): ReadonlyMap<string, string> {
    this.#headers ??= this.#headersAt < 0 ? new Map() : readHeaders(this.#text, this.#headersAt);
    return this.#headers;
  }

  header(name: string): string | undefined {
    return name === "if-match" ? this.#ifMatch : this.headers.get(name);
  }
}

/** The multipart boundary of a `Content-Type: multipart/mixed; boundary=…` header. */
export function boundaryOf(contentType: string | undefined): string {
  const match = /^\s*multipart\/mixed\s*;.*?boundary=("?)([^";]+)\1/i.exec(contentType ?? "");
  if (match === null) throw badRequest("InvalidInput", "a batch must be multipart/mixed with a boundary");
  return match[2] as string;
}

/** A `$batch` body: one changeset of operations, or a single query outside any changeset. */
export type ParsedBatch =
  | { readonly kind: "changeset"; readonly operations: BatchOperation[] }
  | { readonly kind: "query"; readonly operation: BatchOperation };

/**
 * Parses a `$batch` body once: the service allows either one changeset (an entity group transaction)
 * or one query (GET) alone in its batch (see `parseBatchBody` for the changeset's rules).
 */
export function parseBatch(body: string, boundary: string): ParsedBatch {
  const parts = splitParts(crlfOnly(body), boundary);
  const operation = queryOf(parts);
  return operation !== undefined
    ? { kind: "query", operation }
    : { kind: "changeset", operations: changesetOf(parts) };
}

/**
 * Parses an entity group transaction body (OData batch, "Performing entity group transactions"):
 * one changeset, itself multipart/mixed, whose parts are `application/http` requests. Lines may
 * end in CRLF or LF. Anything else (no changeset, two changesets, a part that is not a request)
 * is 400 InvalidInput, decided before any operation runs.
 *
 * A batch body holds up to 100 operations and 4 MiB, so it is scanned by offsets: bare LFs become
 * CRLF once, then no line is copied unless it is a header or a delimiter candidate.
 */
export function parseBatchBody(body: string, boundary: string): BatchOperation[] {
  return changesetOf(splitParts(crlfOnly(body), boundary));
}

function changesetOf(batchParts: readonly string[]): BatchOperation[] {
  if (batchParts.length !== 1) throw badRequest("InvalidInput", "a batch must hold exactly one changeset");
  const part = batchParts[0] as string;
  const { value: contentType, restAt } = scanHeaders(part, 0, "content-type");
  const changeset = boundaryOf(contentType);
  return splitParts(part.slice(restAt), changeset).map(parseOperation);
}

/**
 * The query operation of a batch that holds one request part instead of a changeset (the service
 * allows a single query, alone in its batch); undefined when the batch is a changeset.
 */
function queryOf(parts: readonly string[]): BatchOperation | undefined {
  if (parts.length !== 1) return undefined;
  const part = parts[0] as string;
  const { value: contentType } = scanHeaders(part, skipNewlines(part, 0), "content-type");
  if (!/^application\/http/i.test(contentType ?? "")) return undefined;
  const operation = parseOperation(part);
  if (operation.method !== "GET") {
    throw badRequest("InvalidInput", "a request outside a changeset must be a query (GET)");
  }
  return operation;
}

/** The text with every line break as CRLF; the text itself when it has no bare LF (the SDKs send CRLF). */
function crlfOnly(text: string): string {
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) {
    if (at === 0 || text.charCodeAt(at - 1) !== CR) return text.replace(BARE_LF, "\r\n");
  }
  return text;
}

const CR = 13;
// A line feed that does not end a CRLF (every other line break is already CRLF).
const BARE_LF = /(?<!\r)\n/g;

/**
 * The parts between `--boundary` delimiter lines (trailing whitespace ignored), up to the closing
 * `--boundary--`, of CRLF-only text; each part is the text of its lines, without the CRLF before the
 * next delimiter.
 */
function splitParts(text: string, boundary: string): string[] {
  const delimiter = `--${boundary}`;
  const parts: string[] = [];
  let partAt = -1; // where the current part starts; -1 before the first delimiter
  // Only lines that start with the delimiter can be delimiter lines: jump from one to the next.
  for (let at = text.indexOf(delimiter); at >= 0; at = text.indexOf(delimiter, at + 1)) {
    if (at > 0 && !(text.charCodeAt(at - 1) === LF && text.charCodeAt(at - 2) === CR)) continue; // not at a line start
    const newline = text.indexOf("\r\n", at);
    const end = newline < 0 ? text.length : newline;
    const kind = delimiterKind(text, at, end, delimiter);
    if (kind === undefined) continue;
    const closing = kind === "closing";
    if (partAt >= 0) parts.push(text.slice(partAt, Math.max(partAt, at - 2)));
    if (closing) return parts;
    if (newline < 0) break;
    partAt = newline + 2;
  }
  throw badRequest("InvalidInput", `the multipart body does not end with --${boundary}--`);
}

const LF = 10;

/**
 * What the line text[at, end), which starts with `delimiter`, is once trailing white space is ignored:
 * the delimiter, the closing delimiter (`--` after it), or neither. Most lines are exactly the
 * delimiter, settled without copying the line.
 */
function delimiterKind(
  text: string,
  at: number,
  end: number,
  delimiter: string,
): "open" | "closing" | undefined {
  const after = at + delimiter.length;
  // A boundary ending in white space (quoted) is rare: there the whole line is trimmed as it is.
  if (after === end && delimiter.trimEnd() === delimiter) return "open";
  const trimmed = text.slice(at, end).trimEnd();
  return trimmed === delimiter ? "open" : trimmed === `${delimiter}--` ? "closing" : undefined;
}

/** All header lines of CRLF-only text from `start` (see `scanHeaders`), by lower-case name. */
function readHeaders(text: string, start: number): Map<string, string> {
  const headers = new Map<string, string>();
  scanHeaders(text, start, undefined, headers);
  return headers;
}

/** Whether text[at, end) is empty or white space only. */
function isBlank(text: string, at: number, end: number): boolean {
  if (at === end) return true;
  const first = text.charCodeAt(at);
  // A printable ASCII first character settles it without copying the line.
  if (first > 32 && first < 127) return false;
  return text.slice(at, end).trim() === "";
}

/** The lower-case, trimmed header name in text[at, colon). */
function headerName(text: string, at: number, colon: number): string {
  const name = text.slice(at, colon);
  const plain = text.charCodeAt(at) > 32 && text.charCodeAt(colon - 1) > 32;
  return (plain ? name : name.trim()).toLowerCase();
}

/** The offset after any CRLFs at `start`. */
function skipNewlines(text: string, start: number): number {
  let at = start;
  while (text.startsWith("\r\n", at)) at += 2;
  return at;
}

function parseOperation(part: string): BatchOperation {
  const mime = scanHeaders(part, skipNewlines(part, 0), "content-type");
  if (!/^application\/http/i.test(mime.value ?? "")) {
    throw badRequest("InvalidInput", "every changeset part must be Content-Type: application/http");
  }
  const lineAt = skipNewlines(part, mime.restAt);
  const newline = part.indexOf("\r\n", lineAt);
  const line = part.slice(lineAt, newline < 0 ? part.length : newline).trim();
  const space = requestLineSpace(line);
  if (space < 0) throw badRequest("InvalidInput", "a changeset part must start with an HTTP request line");
  const method = line.slice(0, space);
  const url = line.slice(space + 1, line.length - HTTP_VERSION.length);
  if (newline < 0) return new ParsedOperation(method, url, "", part, -1, undefined);
  const http = scanHeaders(part, newline + 2, "if-match");
  return new ParsedOperation(method, url, part.slice(http.restAt).trim(), part, newline + 2, http.value);
}

const HTTP_VERSION = " HTTP/1.1";
const NO_WHITESPACE = /^\S+$/;

/**
 * Where the space after the method is in a request line `METHOD URL HTTP/1.1` (method in capitals,
 * URL without white space), or -1 when the line is not one; `/^([A-Z]+) (\S+) HTTP\/1\.1$/` without
 * building a match.
 */
function requestLineSpace(line: string): number {
  if (!line.endsWith(HTTP_VERSION)) return -1;
  let space = 0;
  for (; space < line.length; space++) {
    const c = line.charCodeAt(space);
    if (c < 65 || c > 90) break; // A-Z
  }
  if (space === 0 || line.charCodeAt(space) !== 32) return -1;
  const urlEnd = line.length - HTTP_VERSION.length;
  return urlEnd > space + 1 && NO_WHITESPACE.test(line.slice(space + 1, urlEnd)) ? space : -1;
}

/**
 * Reads the header lines of CRLF-only text from `start` up to the first blank line (or the end),
 * refusing a line without a name and colon; the offset of what follows the blank line (the text's
 * length when there is none). Keeps the value of the header `wanted` (lower case; the last one given),
 * and with `all`, every header by lower-case name.
 */
function scanHeaders(
  text: string,
  start: number,
  wanted: string | undefined,
  all?: Map<string, string>,
): { value: string | undefined; restAt: number } {
  let value: string | undefined;
  let at = start;
  while (at < text.length || at === start) {
    const newline = text.indexOf("\r\n", at);
    const end = newline < 0 ? text.length : newline;
    if (isBlank(text, at, end)) return { value, restAt: newline < 0 ? text.length : newline + 2 };
    const colon = text.indexOf(":", at);
    if (colon <= at || colon >= end) {
      const line = text.slice(at, end);
      throw badRequest("InvalidInput", `malformed header line in batch: '${line.slice(0, 80)}'`);
    }
    if (all !== undefined) all.set(headerName(text, at, colon), text.slice(colon + 1, end).trim());
    if (wanted !== undefined && isHeaderName(text, at, colon, wanted))
      value = text.slice(colon + 1, end).trim();
    if (newline < 0) break;
    at = newline + 2;
  }
  return { value, restAt: text.length };
}

/** Whether text[at, colon) is the header name `wanted` (lower case), as `headerName` would read it. */
function isHeaderName(text: string, at: number, colon: number, wanted: string): boolean {
  if (colon - at !== wanted.length) {
    // Only white space around it or a character that lower-cases to another length can change that.
    const first = text.charCodeAt(at);
    const last = text.charCodeAt(colon - 1);
    if (first > 32 && first < 127 && last > 32 && last < 127 && isAscii(text, at, colon)) return false;
    return headerName(text, at, colon) === wanted;
  }
  for (let i = 0; i < wanted.length; i++) {
    let c = text.charCodeAt(at + i);
    if (c > 127) return headerName(text, at, colon) === wanted;
    if (c >= 65 && c <= 90) c += 32; // A-Z
    if (c !== wanted.charCodeAt(i)) return false;
  }
  return true;
}

function isAscii(text: string, at: number, end: number): boolean {
  for (let i = at; i < end; i++) if (text.charCodeAt(i) > 127) return false;
  return true;
}
