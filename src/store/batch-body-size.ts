import type { StoreLimits } from "../util/store-limits.js";
import type { TransactionAction } from "./table-store.js";

/**
 * The exact size of the `$batch` request body `@azure/data-tables` (13.x) sends for an entity group
 * transaction, as `AzureStore` submits it. The body is (TableTransaction.js, TablePolicies.js,
 * transactionHelpers.js):
 *
 *   --batch_<uuid>⏎content-type: multipart/mixed; boundary=changeset_<uuid>⏎⏎
 *   then per operation: ⏎--changeset_<uuid>⏎content-type: application/http⏎content-transfer-encoding: binary⏎⏎
 *     <METHOD> <account URL>/<table>[(PartitionKey='<pk>',RowKey='<rk>')] HTTP/1.1⏎<headers, one a line>⏎⏎[⏎<JSON>]
 *   ⏎--changeset_<uuid>--⏎--batch_<uuid>--⏎
 *
 * with keys quote-doubled and percent-encoded (`encodeURIComponent`, 9 bytes for a `日`), the JSON as
 * the SDK's `serialize` writes it (typed values with `name@odata.type` annotations) in UTF-8. The
 * service refuses a body over 4 MiB with 413 `RequestBodyTooLarge` (not retried), so tablekit sizes every
 * batch with this function before sending it, and `MemoryStore` refuses the same transactions.
 * On the Cosmos DB Table API each sub-request also carries an `x-ms-version` line and a merge goes as a
 * POST with `X-HTTP-Method: MERGE` (see `sdkBatchesAsCosmos`). test/bulk/batch-body-size.test.ts checks
 * the size byte for byte against the bodies AzureStore sends, which test/store-azure/batch-request.test.ts
 * holds to the SDK's.
 */

/**
 * The account URL a store without one of its own (MemoryStore) sizes batches with: the longest
 * standard Table storage endpoint (account names have at most 24 characters), so a transaction the
 * reference store accepts is accepted by any Azure storage account with a standard endpoint.
 */
export const NOMINAL_ACCOUNT_URL = `https://${"a".repeat(24)}.table.core.windows.net`;

/** Table names have at most 63 characters: the longest name stands in when the table is not known. */
const LONGEST_TABLE = "t".repeat(63);

const CRLF = 2;
/** `batch_` / `changeset_` and a `crypto.randomUUID()`-shaped id (36 characters). */
const BATCH_BOUNDARY = "batch_".length + 36;
const CHANGESET_BOUNDARY = "changeset_".length + 36;

/** The bytes of a `$batch` body besides its operations: the opening part header and both closing boundaries. */
export const BATCH_ENVELOPE_BYTES =
  2 +
  BATCH_BOUNDARY +
  CRLF +
  "content-type: multipart/mixed; boundary=".length +
  CHANGESET_BOUNDARY +
  CRLF +
  CRLF +
  // The operations are joined to the opening part with CRLFs (counted per operation), then:
  CRLF +
  (2 + CHANGESET_BOUNDARY + 2) +
  CRLF +
  (2 + BATCH_BOUNDARY + 2) +
  CRLF;

// Each operation's part: the CRLF joining it to the previous one, its boundary, the MIME headers and the
// empty line after them, the request line's fixed text (" " before the URL, " HTTP/1.1") and the CRLFs
// closing the headers (header CRLF, the "\r\n" element, and the CRLF joining it to the body).
const PART_BYTES =
  CRLF +
  2 +
  CHANGESET_BOUNDARY +
  CRLF +
  "content-type: application/http".length +
  CRLF +
  "content-transfer-encoding: binary".length +
  CRLF +
  CRLF +
  " ".length +
  " HTTP/1.1".length +
  CRLF +
  CRLF;

/** Sub-request headers the SDK writes, per operation kind (each followed by a CRLF). */
const INSERT_HEADERS = headerBytes([
  "Content-Type: application/json;odata=nometadata",
  "Accept: application/json;odata=minimalmetadata",
  "DataServiceVersion: 3.0",
  "Prefer: return-no-content",
]);
const WRITE_HEADERS = headerBytes([
  "Content-Type: application/json",
  "DataServiceVersion: 3.0",
  "Accept: application/json",
]);
const DELETE_HEADERS = headerBytes([
  "Accept: application/json;odata=minimalmetadata",
  "DataServiceVersion: 3.0",
]);
const IF_MATCH = "If-Match: ".length + CRLF;
const KEY_PATH = "(PartitionKey='',RowKey='')".length;

function headerBytes(headers: readonly string[]): number {
  return headers.reduce((sum, header) => sum + header.length + CRLF, 0);
}

/**
 * The start of every sub-request URL of `table`, as the SDK builds it: the account URL's origin and
 * path with a trailing slash (core-client's appendPath), then the table name percent-encoded.
 */
export function batchTableUrl(accountUrl: string, table: string): string {
  const url = new URL(accountUrl);
  const path = url.pathname.endsWith("/") ? url.pathname : `${url.pathname}/`;
  return `${url.protocol}//${url.host}${path}${encodeURIComponent(table)}`;
}

/** The table URL `limits` size batches of `table` with (the nominal account and longest table name when unknown). */
export function batchTableUrlFor(limits: StoreLimits, table: string | undefined): string {
  const account = limits.accountUrl ?? NOMINAL_ACCOUNT_URL;
  const name = table ?? LONGEST_TABLE;
  const cacheKey = `${account}\n${name}`;
  let url = tableUrls.get(cacheKey);
  if (url === undefined) {
    url = batchTableUrl(account, name);
    if (tableUrls.size > 1000) tableUrls.clear();
    tableUrls.set(cacheKey, url);
  }
  return url;
}

const tableUrls = new Map<string, string>();

/**
 * The bytes one operation adds to a `$batch` body whose sub-requests start with `tableUrl`
 * (see `batchTableUrl`): its MIME part, request line, headers and JSON body. The body's size is
 * `BATCH_ENVELOPE_BYTES` plus this for each operation.
 */
export function batchOperationBytes(tableUrl: string, action: TransactionAction): number {
  let bytes = PART_BYTES + tableUrl.length;
  if (cosmosForm(tableUrl))
    bytes +=
      COSMOS_VERSION +
      (action.kind !== "delete" && action.kind !== "insert" && action.mode === "merge" ? COSMOS_MERGE : 0);
  switch (action.kind) {
    case "insert":
      return bytes + "POST".length + INSERT_HEADERS + CRLF + entityJsonBytes(action.entity);
    case "upsert":
      bytes += methodBytes(action.mode) + WRITE_HEADERS;
      break;
    case "update":
      bytes += methodBytes(action.mode) + WRITE_HEADERS + IF_MATCH + utf8Bytes(action.ifMatch);
      break;
    case "delete":
      // No body: the part ends with the empty line after the headers.
      return (
        bytes +
        "DELETE".length +
        KEY_PATH +
        encodedKeyBytes(action.partitionKey) +
        encodedKeyBytes(action.rowKey) +
        DELETE_HEADERS +
        IF_MATCH +
        utf8Bytes(action.ifMatch)
      );
  }
  const entity = action.entity;
  return (
    bytes +
    KEY_PATH +
    encodedKeyBytes(entity.partitionKey) +
    encodedKeyBytes(entity.rowKey) +
    CRLF +
    entityJsonBytes(entity)
  );
}

/**
 * The SDK's test for the Cosmos DB Table API when it assembles a batch (utils/isCosmosEndpoint.js),
 * kept as written so that AzureStore writes the Cosmos DB form of a body (batch-request.ts) exactly where
 * the SDK does, and it is sized here the same: a Cosmos host, or `localhost` unless the path is
 * Azurite's `devstoreaccount1` or the host an `AZURITE_ACCOUNTS` account.
 */
export function sdkBatchesAsCosmos(url: string): boolean {
  const parsed = new URL(url);
  if (parsed.hostname.includes(".table.cosmosdb.") || parsed.hostname.includes(".table.cosmos.")) return true;
  if (
    (parsed.hostname === "localhost" || parsed.hostname === "127.0.0.1") &&
    parsed.pathname.startsWith("/devstoreaccount1")
  )
    return false;
  const azurite = process.env.AZURITE_ACCOUNTS?.split(":")[0];
  if (azurite && parsed.hostname.includes(azurite)) return false;
  return parsed.hostname === "localhost";
}

/** Whether the body of a batch on `tableUrl` has the Cosmos DB form (see `sdkBatchesAsCosmos`), once per URL. */
function cosmosForm(tableUrl: string): boolean {
  let cosmos = cosmosTableUrls.get(tableUrl);
  if (cosmos === undefined) {
    // A table URL has its account's host and starts with its account's path: the same answer.
    cosmos = sdkBatchesAsCosmos(tableUrl);
    if (cosmosTableUrls.size > 1000) cosmosTableUrls.clear();
    cosmosTableUrls.set(tableUrl, cosmos);
  }
  return cosmos;
}

const cosmosTableUrls = new Map<string, boolean>();
/** What the Cosmos DB form adds to each sub-request: its `x-ms-version` line (and a merge's `X-HTTP-Method`). */
const COSMOS_VERSION = "x-ms-version: 2019-02-02".length + CRLF;
/** A merge on Cosmos DB: `POST` instead of `PATCH`, plus `X-HTTP-Method: MERGE`. */
const COSMOS_MERGE = "X-HTTP-Method: MERGE".length + CRLF - 1;

/** Merge is a PATCH, replace a PUT. */
function methodBytes(mode: string): number {
  return mode === "merge" ? 5 : 3;
}

/** The exact `$batch` body size of `actions` on `table` for a store with `limits`. */
export function batchBodyBytes(
  limits: StoreLimits,
  table: string | undefined,
  actions: readonly TransactionAction[],
): number {
  const tableUrl = batchTableUrlFor(limits, table);
  let bytes = BATCH_ENVELOPE_BYTES;
  for (const action of actions) bytes += batchOperationBytes(tableUrl, action);
  return bytes;
}

/**
 * The exact `$batch` body size of `actions` when it may be over `maxBytes`, else `undefined`: the cheap
 * upper bound (`batchOperationBytesBound`, no text scanned) is summed first, and the exact count, which
 * scans every key and value, runs only when the bound is over. Most transactions are far below 4 MiB
 * ("The total payload of a batch may be no more than 4 MiB": Performing entity group transactions).
 */
export function batchBodyBytesOver(
  limits: StoreLimits,
  table: string | undefined,
  actions: readonly TransactionAction[],
  maxBytes: number,
): number | undefined {
  const tableUrl = batchTableUrlFor(limits, table);
  let bound = BATCH_ENVELOPE_BYTES;
  for (const action of actions) bound += batchOperationBytesBound(tableUrl, action);
  if (bound <= maxBytes) return undefined;
  const bytes = batchBodyBytes(limits, table, actions);
  return bytes > maxBytes ? bytes : undefined;
}

/** UTF-8 bytes of a key in the request line: quotes doubled, then `encodeURIComponent`. */
function encodedKeyBytes(key: string): number {
  let bytes = 0;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x80) bytes += c === 0x27 ? 2 : UNRESERVED[c] === 1 ? 1 : 3;
    else if (c < 0x800) bytes += 6;
    else if (c >= 0xd800 && c <= 0xdbff && isLowSurrogate(key.charCodeAt(i + 1))) {
      bytes += 12;
      i++;
    } else bytes += 9; // a lone surrogate counts as U+FFFD (encodeURIComponent would refuse it)
  }
  return bytes;
}

// What encodeURIComponent leaves as is: A-Z a-z 0-9 - _ . ! ~ * ' ( ).
const UNRESERVED = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()")
  UNRESERVED[c.charCodeAt(0)] = 1;

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** The UTF-8 bytes of the entity's JSON as the SDK serializes it (TableClient → serialize → JSON.stringify). */
function entityJsonBytes(entity: Record<string, unknown>): number {
  let bytes = 2;
  let first = true;
  for (const name in entity) {
    // AzureStore never sends these two (the SDK would map them onto odata.etag and Timestamp).
    if (name === "etag" || name === "timestamp") continue;
    const value = entity[name];
    if (value === undefined) continue; // JSON.stringify leaves it out
    const wireName = name === "partitionKey" ? "PartitionKey" : name === "rowKey" ? "RowKey" : name;
    bytes += (first ? 0 : 1) + jsonStringBytes(wireName) + 1;
    first = false;
    // `,"name@odata.type":"Edm.<type>"`
    const annotation = (type: string) =>
      1 + jsonStringBytes(`${wireName}@odata.type`) + 1 + 2 + 4 + type.length;
    switch (typeof value) {
      case "string":
        bytes += jsonStringBytes(value);
        break;
      case "boolean":
        bytes += value ? 4 : 5;
        break;
      case "number":
        // A non-finite double goes as the string "NaN" / "Infinity" / "-Infinity", annotated (sdk-entity.ts).
        bytes += Number.isFinite(value)
          ? numberLength(value)
          : String(value).length + 2 + annotation("Double");
        break;
      case "bigint":
        bytes += value.toString().length + 2 + annotation("Int64");
        break;
      case "object":
        if (value === null) bytes += 4;
        else if (value instanceof Date)
          bytes +=
            (Number.isNaN(value.getTime()) ? 4 : value.toISOString().length + 2) + annotation("DateTime");
        else if (value instanceof Uint8Array)
          bytes += Math.ceil(value.byteLength / 3) * 4 + 2 + annotation("Binary");
        else {
          const typed = value as { type: string; value: unknown };
          bytes += typedValueBytes(typed.type, typed.value) + annotation(typed.type);
        }
        break;
      default:
        bytes += utf8Bytes(JSON.stringify(value) ?? "null");
    }
  }
  return bytes;
}

function typedValueBytes(type: string, value: unknown): number {
  switch (typeof value) {
    case "string":
      return jsonStringBytes(value);
    case "number":
      if (Number.isFinite(value)) return numberLength(value);
      return type === "Double" ? String(value).length + 2 : 4;
    case "boolean":
      return value ? 4 : 5;
    default:
      return utf8Bytes(JSON.stringify(value) ?? "null");
  }
}

function numberLength(value: number): number {
  return String(value).length;
}

/** UTF-8 bytes of `JSON.stringify(text)`: quotes, escapes (`\"`, `\\`, `\n`…, `\u00XX`, lone surrogates as `\uDXXX`). */
function jsonStringBytes(text: string): number {
  if (text.length > 256) return Buffer.byteLength(JSON.stringify(text), "utf8");
  let bytes = 2;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if (c >= 0x20) bytes += c === 0x22 || c === 0x5c ? 2 : 1;
      else bytes += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
    } else if (c < 0x800) bytes += 2;
    else if (c < 0xd800 || c > 0xdfff) bytes += 3;
    else if (c <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 6;
  }
  return bytes;
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * An upper bound of `batchOperationBytes`, counted without scanning any text (every UTF-16 unit at its
 * widest: 12 bytes in a key, 6 in JSON), so a store can skip the exact count of small transactions.
 */
export function batchOperationBytesBound(tableUrl: string, action: TransactionAction): number {
  // Method, headers and key path of the widest kind (insert has no key path but more headers), and the
  // Cosmos DB form's lines wherever it may be sent.
  let bytes =
    PART_BYTES +
    tableUrl.length +
    6 +
    INSERT_HEADERS +
    IF_MATCH +
    KEY_PATH +
    CRLF +
    COSMOS_VERSION +
    COSMOS_MERGE;
  if (action.kind === "delete")
    return bytes + 12 * (action.partitionKey.length + action.rowKey.length) + 3 * action.ifMatch.length;
  if (action.kind === "update") bytes += 3 * action.ifMatch.length;
  const entity = action.entity;
  bytes += 12 * (entity.partitionKey.length + entity.rowKey.length) + 2;
  for (const name in entity) {
    const value = entity[name];
    // Name, quotes, colon, comma; and an annotation's name, quotes and the longest type name.
    bytes += 12 * name.length + 64;
    if (typeof value === "string") bytes += 6 * value.length + 2;
    else if (value instanceof Uint8Array) bytes += Math.ceil(value.byteLength / 3) * 4 + 2;
    else if (typeof value === "object" && value !== null && !(value instanceof Date)) {
      const inner = (value as { value: unknown }).value;
      bytes += typeof inner === "string" ? 6 * inner.length + 2 : 32;
    } else bytes += 32; // numbers, bigints (at most 20 digits), dates, booleans, null
  }
  return bytes;
}
