/**
 * The batch parser as first written (line splits and joins), kept as the reference the faster parser in
 * src/server/batch-body.ts is checked against: both must answer every input alike.
 */
import { badRequest } from "../../src/server/service-error.js";

/** One operation of a `$batch` changeset: its HTTP request as the client wrote it. */
export interface BatchOperation {
  readonly method: string;
  /** The absolute or relative URL of the request line. */
  readonly url: string;
  /** Header names in lower case. */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
}

/** The multipart boundary of a `Content-Type: multipart/mixed; boundary=…` header. */
function boundaryOf(contentType: string | undefined): string {
  const match = /^\s*multipart\/mixed\s*;.*?boundary=("?)([^";]+)\1/i.exec(contentType ?? "");
  if (match === null) throw badRequest("InvalidInput", "a batch must be multipart/mixed with a boundary");
  return match[2] as string;
}

/**
 * Parses an entity group transaction body (OData batch, "Performing entity group transactions"):
 * one changeset, itself multipart/mixed, whose parts are `application/http` requests. Lines may
 * end in CRLF or LF. Anything else (no changeset, two changesets, a part that is not a request)
 * is 400 InvalidInput, decided before any operation runs.
 */
export function parseBatchBody(body: string, boundary: string): BatchOperation[] {
  const batchParts = splitParts(body, boundary);
  if (batchParts.length !== 1) throw badRequest("InvalidInput", "a batch must hold exactly one changeset");
  const { headers, rest } = readHeaders(batchParts[0] as string);
  const changeset = boundaryOf(headers.get("content-type"));
  return splitParts(rest, changeset).map(parseOperation);
}

/** The parts between `--boundary` delimiters, up to the closing `--boundary--`. */
function splitParts(body: string, boundary: string): string[] {
  const delimiter = `--${boundary}`;
  const lines = body.split(/\r?\n/);
  const parts: string[] = [];
  let current: string[] | undefined;
  let closed = false;
  for (const line of lines) {
    const trimmed = line.trimEnd();
    if (trimmed === delimiter || trimmed === `${delimiter}--`) {
      if (current !== undefined) parts.push(current.join("\r\n"));
      current = trimmed === delimiter ? [] : undefined;
      if (trimmed !== delimiter) {
        closed = true;
        break;
      }
    } else if (current !== undefined) {
      current.push(line);
    }
  }
  if (!closed) throw badRequest("InvalidInput", `the multipart body does not end with --${boundary}--`);
  return parts;
}

/** Splits a MIME part into its headers and what follows the blank line. */
function readHeaders(part: string): { headers: Map<string, string>; rest: string } {
  const lines = part.split("\r\n");
  const headers = new Map<string, string>();
  let i = 0;
  while (i < lines.length && (lines[i] as string).trim() !== "") {
    const line = lines[i] as string;
    const colon = line.indexOf(":");
    if (colon <= 0)
      throw badRequest("InvalidInput", `malformed header line in batch: '${line.slice(0, 80)}'`);
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    i++;
  }
  return { headers, rest: lines.slice(i + 1).join("\r\n") };
}

function parseOperation(part: string): BatchOperation {
  const mime = readHeaders(part.replace(/^(\r\n)+/, ""));
  if (!/^application\/http/i.test(mime.headers.get("content-type") ?? "")) {
    throw badRequest("InvalidInput", "every changeset part must be Content-Type: application/http");
  }
  const lines = mime.rest.replace(/^(\r\n)+/, "").split("\r\n");
  const requestLine = /^([A-Z]+) (\S+) HTTP\/1\.1$/.exec((lines[0] ?? "").trim());
  if (requestLine === null)
    throw badRequest("InvalidInput", "a changeset part must start with an HTTP request line");
  const http = readHeaders(lines.slice(1).join("\r\n"));
  return {
    method: requestLine[1] as string,
    url: requestLine[2] as string,
    headers: http.headers,
    body: http.rest.trim(),
  };
}
