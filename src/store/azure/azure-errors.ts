import { RestError } from "@azure/data-tables";
import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  StoreError,
  TableKitError,
  TransactionError,
} from "../../errors.js";
import { redactSecrets } from "../../util/redact-secrets.js";
import type { TransactionAction } from "../table-store.js";
import { type Redact, sanitizedCause } from "./sanitized-cause.js";

/**
 * The one place where `@azure/data-tables` failures become tablekit errors.
 *
 * Where things are (observed with Azurite 3.35 and the SDK 13.3, see test/store-azure/AZURITE-NOTES.md):
 * - single operation: `RestError` with `statusCode`, no `code`; the service code is in
 *   `details.errorCode` and `details.odataError.code`, its text in `details.odataError.message.value`;
 *   `message` is the raw JSON body.
 * - transaction: the SDK parses the failing sub-response itself, so `code` is the service code,
 *   `statusCode` the sub-response status and `message` the service text, prefixed "N:" with the
 *   0-based index of the failing operation. `details` is absent.
 * - network: `RestError` without `statusCode`, `code` "ECONNREFUSED" / "ECONNRESET" / ...
 * - timeout (our AbortSignal): an `AbortError`, not a `RestError`.
 */

/** The store operation a failure happened in. */
export type AzureOperation =
  | "createTable"
  | "deleteTable"
  | "listTables"
  | "getEntity"
  | "queryPage"
  | "insert"
  | "upsert"
  | "update"
  | "delete"
  | "submitTransaction"
  | "putBlob"
  | "getBlob"
  | "deleteBlob"
  | "listBlobs"
  | "createContainer"
  | "deleteContainer";

/** What was being done when the error happened: names the entity in the resulting tablekit error. */
export interface AzureErrorContext {
  operation: AzureOperation;
  table: string;
  partitionKey?: string;
  rowKey?: string;
  /** The transaction's actions, to name the failing one. */
  actions?: readonly TransactionAction[];
  /** The per-request timeout in force, for the message of a timeout. */
  timeoutMs?: number;
  /** Exact secret values (account key, SAS) that must never appear in a message. */
  secrets?: readonly string[];
}

/** Maps any failure of an SDK call to the tablekit error the store port promises. */
export function translateAzureError(error: unknown, context: AzureErrorContext): TableKitError {
  if (error instanceof TableKitError) return error;
  const redact = (text: string) => redactSecrets(text, context.secrets);
  const cause = sanitizedCause(error, redact);
  return translated(cause, context, redact);
}

function translated(error: unknown, context: AzureErrorContext, redact: Redact): TableKitError {
  if (!isRestError(error) || error.statusCode === undefined) {
    return networkError(error, context, redact);
  }

  const status = error.statusCode;
  const code = serviceCodeOf(error);
  const text = serviceMessageOf(error);
  const keys = entityKeys(context);

  if (context.operation === "submitTransaction") {
    // Throttling, timeouts and server faults leave the outcome open and may be retried: not a rejection.
    if (status >= 500 || status === 408 || status === 429) {
      return storeError(context, status, code, text.message, error, redact);
    }
    return transactionError(context, status, code, text, error, redact);
  }
  if (keys !== undefined) {
    if (
      status === 409 &&
      context.operation === "insert" &&
      (code === undefined || code === "EntityAlreadyExists")
    ) {
      return new EntityAlreadyExistsError(keys, { cause: error });
    }
    if (
      status === 404 &&
      code !== "TableNotFound" &&
      (context.operation === "update" || context.operation === "getEntity" || context.operation === "delete")
    ) {
      return new EntityNotFoundError(keys, { cause: error });
    }
    if (status === 412) return new ConcurrencyError(keys, { cause: error });
  }
  return storeError(context, status, code, text.message, error, redact);
}

/** The service's error code, wherever the SDK put it. */
export function serviceCodeOf(error: RestError): string | undefined {
  const details = error.details as { errorCode?: unknown; odataError?: { code?: unknown } } | undefined;
  for (const candidate of [details?.errorCode, details?.odataError?.code, error.code]) {
    if (typeof candidate === "string" && candidate !== "") return candidate;
  }
  return undefined;
}

interface ServiceMessage {
  /** First line of the service's text, without the "N:" index prefix. */
  message: string;
  /** The failing operation, when the text starts with "N:". */
  index: number | undefined;
}

function serviceMessageOf(error: RestError): ServiceMessage {
  const details = error.details as
    | { odataError?: { message?: { value?: unknown } }; Message?: unknown }
    | undefined;
  // JSON errors carry odata.error; XML ones (e.g. 403 AuthorizationFailure) are parsed into details.Message.
  let raw = details?.odataError?.message?.value ?? details?.Message;
  if (typeof raw !== "string") raw = odataMessageIn(error.message) ?? error.message;
  const text = String(raw);
  // The service appends "\nRequestId:…\nTime:…": keep the first line only.
  const firstLine = text.split("\n", 1)[0]?.trim() ?? "";
  const match = /^(\d+):(.*)$/s.exec(firstLine);
  if (match) return { index: Number(match[1]), message: (match[2] ?? "").trim() };
  return { index: undefined, message: firstLine };
}

/** Extracts `odata.error.message.value` when `message` is the raw JSON body. */
function odataMessageIn(message: string): string | undefined {
  if (!message.startsWith("{")) return undefined;
  try {
    const body = JSON.parse(message) as { "odata.error"?: { message?: { value?: unknown } } };
    const value = body["odata.error"]?.message?.value;
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

function isRestError(error: unknown): error is RestError {
  return error instanceof RestError || (error instanceof Error && error.name === "RestError");
}

function entityKeys(context: AzureErrorContext) {
  if (context.partitionKey === undefined || context.rowKey === undefined) return undefined;
  return { table: context.table, partitionKey: context.partitionKey, rowKey: context.rowKey };
}

function transactionError(
  context: AzureErrorContext,
  status: number,
  code: string | undefined,
  text: ServiceMessage,
  cause: unknown,
  redact: Redact,
): TransactionError {
  const actions = context.actions ?? [];
  // Without an "N:" prefix the service rejected the batch as a whole (e.g. 413 RequestBodyTooLarge);
  // the service itself reports such failures as "0:" (e.g. more than 100 operations), so use 0.
  const index = text.index !== undefined && text.index < Math.max(actions.length, 1) ? text.index : 0;
  const action = actions[index];
  const rowKey = text.index === undefined || action === undefined ? undefined : rowKeyOf(action);
  return new TransactionError(
    {
      index,
      table: context.table,
      partitionKey: context.partitionKey ?? (action ? partitionKeyOf(action) : ""),
      ...(rowKey === undefined ? {} : { rowKey }),
      statusCode: status,
      ...(code === undefined ? {} : { serviceCode: code }),
      ...(text.message ? { message: redact(text.message) } : {}),
    },
    { cause },
  );
}

function storeError(
  context: AzureErrorContext,
  status: number | undefined,
  code: string | undefined,
  text: string,
  cause: unknown,
  redact: Redact,
): StoreError {
  const what = [status, code].filter((part) => part !== undefined).join(" ");
  const service = /Blobs?$|Container$/.test(context.operation) ? "Blob" : "Table";
  const target = service === "Blob" ? `blob ${context.table}` : describeTarget(context);
  const message = `Azure ${service} ${context.operation} failed (${target}): ${what || "error"}${text ? ` - ${text}` : ""}`;
  const retryAfterMs = retryAfterOf(cause);
  return new StoreError(redact(message), {
    ...(status === undefined ? {} : { statusCode: status }),
    ...(code === undefined ? {} : { serviceCode: code }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    cause,
  });
}

/** The service's back-off hint: `x-ms-retry-after-ms`/`retry-after-ms`, or `Retry-After` in seconds or as a date. */
function retryAfterOf(error: unknown): number | undefined {
  if (!isRestError(error)) return undefined;
  const headers = error.response?.headers;
  if (headers === undefined) return undefined;
  for (const name of ["x-ms-retry-after-ms", "retry-after-ms"]) {
    const ms = Number(headers.get(name) ?? Number.NaN);
    if (Number.isFinite(ms) && ms >= 0) return ms;
  }
  const value = headers.get("retry-after");
  if (value === undefined || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function networkError(error: unknown, context: AzureErrorContext, redact: Redact): StoreError {
  const name = error instanceof Error ? error.name : undefined;
  if (name === "AbortError" || name === "TimeoutError") {
    const after = context.timeoutMs === undefined ? "" : ` after ${context.timeoutMs} ms`;
    return storeError(context, undefined, "Timeout", `no response${after}`, error, redact);
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return storeError(context, undefined, typeof code === "string" ? code : undefined, message, error, redact);
}

function describeTarget(context: AzureErrorContext): string {
  let target = `table ${context.table}`;
  if (context.partitionKey !== undefined) target += `, PartitionKey '${context.partitionKey}'`;
  if (context.rowKey !== undefined) target += `, RowKey '${context.rowKey}'`;
  return target;
}

function partitionKeyOf(action: TransactionAction): string {
  return action.kind === "delete" ? action.partitionKey : action.entity.partitionKey;
}

function rowKeyOf(action: TransactionAction): string {
  return action.kind === "delete" ? action.rowKey : action.entity.rowKey;
}
