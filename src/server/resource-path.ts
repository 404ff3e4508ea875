import { badRequest } from "./service-error.js";

/** What a request path (after the account segment) addresses. */
export type Resource =
  | { kind: "service" }
  | { kind: "tables" }
  | { kind: "table"; table: string }
  | { kind: "batch" }
  | { kind: "entities"; table: string }
  | { kind: "entity"; table: string; partitionKey: string; rowKey: string };

/**
 * Parses the resource part of a Table service path: `Tables`, `Tables('name')`, `$batch`, `name`,
 * `name()` or `name(PartitionKey='…',RowKey='…')`. Keys are percent-decoded first and then unquoted
 * (`''` is one `'`), as the service reads them.
 */
export function parseResource(rawPath: string): Resource {
  let path = rawPath;
  // Most paths hold no escapes (a batch names up to 100 entities): decoding is skipped for them.
  if (rawPath.includes("%")) {
    try {
      path = decodeURIComponent(rawPath);
    } catch {
      throw badRequest("InvalidUri", "the request URI is not correctly percent-encoded");
    }
  }
  if (path === "" || path === "/") return { kind: "service" };
  // One trailing slash is tolerated (`Tables/`, `$batch/`, `mytable/`): the service's OData front end
  // treats it as the same resource, and REST clients built from request logs send it.
  if (path.endsWith("/")) path = path.slice(0, -1);
  if (path === "$batch") return { kind: "batch" };
  const open = path.indexOf("(");
  const name = open < 0 ? path : path.slice(0, open);
  if (!/^[A-Za-z0-9$]+$/.test(name)) throw badRequest("InvalidUri", "the request URI is invalid");
  if (open < 0) return name === "Tables" ? { kind: "tables" } : { kind: "entities", table: name };
  if (!path.endsWith(")")) throw badRequest("InvalidUri", "the request URI is invalid");
  const inner = path.slice(open + 1, -1);
  if (name === "Tables") {
    if (inner === "") return { kind: "tables" };
    const quoted = readQuoted(inner, 0);
    if (quoted === undefined || quoted.end !== inner.length) {
      throw badRequest("InvalidUri", "the request URI is invalid");
    }
    return { kind: "table", table: quoted.value };
  }
  if (inner === "") return { kind: "entities", table: name };
  const keys = parseKeys(inner);
  if (keys === undefined)
    throw badRequest("InvalidUri", "the entity address must be (PartitionKey='…',RowKey='…')");
  return { kind: "entity", table: name, ...keys };
}

function parseKeys(inner: string): { partitionKey: string; rowKey: string } | undefined {
  let partitionKey: string | undefined;
  let rowKey: string | undefined;
  let at = 0;
  while (at < inner.length) {
    const eq = inner.indexOf("=", at);
    if (eq < 0) return undefined;
    const key = inner.slice(at, eq).trim();
    const quoted = readQuoted(inner, eq + 1);
    if (quoted === undefined) return undefined;
    if (key === "PartitionKey" && partitionKey === undefined) partitionKey = quoted.value;
    else if (key === "RowKey" && rowKey === undefined) rowKey = quoted.value;
    else return undefined; // another name, or a key named twice
    at = quoted.end;
    if (at < inner.length) {
      if (inner[at] !== ",") return undefined;
      at++;
    }
  }
  return partitionKey === undefined || rowKey === undefined ? undefined : { partitionKey, rowKey };
}

/** Reads `'…'` at `start` with `''` escapes; the index after the closing quote. */
function readQuoted(text: string, start: number): { value: string; end: number } | undefined {
  if (text[start] !== "'") return undefined;
  let value = "";
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf("'", from);
    if (quote < 0) return undefined;
    value += text.slice(from, quote);
    if (text[quote + 1] !== "'") return { value, end: quote + 1 };
    value += "'";
    from = quote + 2;
  }
}
