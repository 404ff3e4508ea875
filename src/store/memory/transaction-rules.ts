import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  StoreError,
  TransactionError,
} from "../../errors.js";
import { AZURE_TABLE_LIMITS, type StoreLimits } from "../../util/store-limits.js";
import type { TransactionAction } from "../table-store.js";
import { keysOf, type ParsedAction, parseAction } from "./write-planner.js";

// Rough size of one operation's MIME part (boundary, request line and headers) around its JSON body.
const PER_OPERATION_OVERHEAD = 300;

/**
 * Validates an entity group transaction without looking at stored state, the service's EGT rules:
 * 1 to 100 operations, all on `partitionKey`, each entity at most once, a payload under 4 MiB
 * (2 MB on the Cosmos DB Table API; estimated from the JSON bodies), and each operation's own input rules. A violation is a
 * `TransactionError` whose `index` is the offending operation.
 */
export function parseTransaction(
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
  limits: StoreLimits = AZURE_TABLE_LIMITS,
): ParsedAction[] {
  const { maxTransactionOperations, maxTransactionBytes } = limits;
  const fail = (index: number, statusCode: number, serviceCode: string, message: string, rowKey?: string) =>
    new TransactionError({ index, table, partitionKey, rowKey, statusCode, serviceCode, message });
  if (!Array.isArray(actions) || actions.length === 0) {
    throw fail(0, 400, "InvalidInput", "a transaction needs at least one operation");
  }
  if (actions.length > maxTransactionOperations) {
    throw fail(
      maxTransactionOperations,
      400,
      "InvalidInput",
      `the batch request operation exceeds the maximum ${maxTransactionOperations} changes per change set (it has ${actions.length})`,
    );
  }
  const seen = new Set<string>();
  let bytes = 0;
  // An upper bound is cheap to count; the exact size is counted only once the bound could reach
  // the limit (from the first operation on, so `bytes` is then exactly what it always was).
  let bound = 0;
  let exact = false;
  return actions.map((action, index) => {
    let parsed: ParsedAction;
    try {
      parsed = parseAction(action);
    } catch (error) {
      throw toTransactionError(error, index, table, partitionKey, undefined);
    }
    const keys = keysOf(parsed);
    if (keys.partitionKey !== partitionKey) {
      throw fail(
        index,
        400,
        "CommandsInBatchActOnDifferentPartitions",
        `all operations must use PartitionKey '${partitionKey}', this one uses '${keys.partitionKey}'`,
        keys.rowKey,
      );
    }
    if (seen.has(keys.rowKey)) {
      throw fail(
        index,
        400,
        "InvalidDuplicateRow",
        `a command with RowKey '${keys.rowKey}' is already present in the batch; an entity can appear only once`,
        keys.rowKey,
      );
    }
    seen.add(keys.rowKey);
    if (!exact) {
      bound += PER_OPERATION_OVERHEAD + (action.kind === "delete" ? 0 : jsonLengthBound(action.entity));
      if (bound >= maxTransactionBytes) {
        exact = true;
        for (const earlier of actions.slice(0, index)) bytes += operationBytes(earlier);
      }
    }
    if (exact) bytes += operationBytes(action);
    if (exact && bytes >= maxTransactionBytes) {
      throw fail(
        index,
        413,
        "RequestBodyTooLarge",
        `the transaction payload reaches ${bytes} bytes at this operation; it must stay under ${maxTransactionBytes}`,
        keys.rowKey,
      );
    }
    return parsed;
  });
}

/** Converts a failure of operation `index` into the `TransactionError` the service's answer maps to. */
export function toTransactionError(
  error: unknown,
  index: number,
  table: string,
  partitionKey: string,
  rowKey: string | undefined,
): TransactionError {
  let statusCode: number | undefined;
  let serviceCode: string | undefined;
  if (error instanceof EntityAlreadyExistsError) [statusCode, serviceCode] = [409, "EntityAlreadyExists"];
  else if (error instanceof EntityNotFoundError) [statusCode, serviceCode] = [404, "ResourceNotFound"];
  else if (error instanceof ConcurrencyError)
    [statusCode, serviceCode] = [412, "UpdateConditionNotSatisfied"];
  else if (error instanceof StoreError) [statusCode, serviceCode] = [error.statusCode, error.serviceCode];
  else throw error;
  return new TransactionError(
    { index, table, partitionKey, rowKey, statusCode, serviceCode, message: error.message },
    { cause: error },
  );
}

/** An operation's share of the payload estimate: its MIME part's overhead and its JSON body. */
function operationBytes(action: TransactionAction): number {
  return PER_OPERATION_OVERHEAD + (action.kind === "delete" ? 0 : jsonLength(action.entity));
}

// Longest JSON text of a number: sign, "0.00000" and 17 significant digits, or exponent forms.
const MAX_NUMBER_LENGTH = 25;
// Longest JSON text of a Date: quotes around "±yyyyyy-mm-ddThh:mm:ss.sssZ".
const MAX_DATE_LENGTH = 29;

/**
 * An upper bound of `jsonLength` (Infinity where it does not know): every UTF-16 unit of a string or
 * name as a six-character escape, every number at its longest. Counted without building any text.
 */
export function jsonLengthBound(entity: unknown, depth = 1): number {
  if (typeof entity !== "object" || entity === null) return Number.POSITIVE_INFINITY;
  let length = 2;
  for (const key in entity) {
    length += key.length * 6 + 4; // quotes, colon, comma
    const value = (entity as Record<string, unknown>)[key];
    switch (typeof value) {
      case "string":
        length += value.length * 6 + 2;
        break;
      case "number":
        length += MAX_NUMBER_LENGTH;
        break;
      case "boolean":
      case "undefined":
        length += 5;
        break;
      case "object":
        if (value === null) length += 4;
        else if (value instanceof Date && value.toJSON === Date.prototype.toJSON) length += MAX_DATE_LENGTH;
        else if (depth > 0 && !("toJSON" in value)) length += jsonLengthBound(value, depth - 1);
        else return Number.POSITIVE_INFINITY;
        break;
      default:
        return Number.POSITIVE_INFINITY;
    }
  }
  return length;
}

/** Length of the entity's JSON body as the SDK would send it (Int64 as strings, Binary as base64). */
export function jsonLength(entity: unknown): number {
  // Counted directly for the usual shapes (what JSON.stringify(entity).length gives, without building
  // the text); anything else takes JSON.stringify with a replacer for bigint and binary values.
  const counted = objectLength(entity, 1);
  if (counted !== undefined) return counted;
  return JSON.stringify(entity, (_key, value: unknown) => {
    if (typeof value === "bigint") return value.toString();
    if (value instanceof Uint8Array)
      return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64");
    return value;
  }).length;
}

// Marks a value JSON.stringify leaves out of an object.
const OMITTED = -1;

/** JSON length of a plain object nested at most `depth` more levels, or `undefined` when not counted. */
function objectLength(value: unknown, depth: number): number | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const proto = Object.getPrototypeOf(value);
  if ((proto !== Object.prototype && proto !== null) || "toJSON" in value) return undefined;
  let length = 2;
  let members = 0;
  for (const key of Object.keys(value)) {
    const v = valueLength((value as Record<string, unknown>)[key], depth);
    if (v === undefined) return undefined;
    if (v === OMITTED) continue;
    length += (members++ === 0 ? 0 : 1) + stringLength(key) + 1 + v;
  }
  return length;
}

function valueLength(value: unknown, depth: number): number | undefined {
  switch (typeof value) {
    case "string":
      return stringLength(value);
    case "number":
      return Number.isFinite(value) ? String(value).length : 4;
    case "boolean":
      return value ? 4 : 5;
    case "undefined":
    case "function":
    case "symbol":
      return OMITTED;
    case "object":
      if (value === null) return 4;
      if (value instanceof Date && value.toJSON === Date.prototype.toJSON) {
        const ms = value.getTime();
        if (Number.isNaN(ms)) return 4;
        const year = value.getUTCFullYear();
        return year >= 0 && year <= 9999 ? 26 : 29; // "yyyy-mm-ddThh:mm:ss.sssZ" or with "±yyyyyy"
      }
      return depth > 0 ? objectLength(value, depth - 1) : undefined;
    default:
      return undefined;
  }
}

/** JSON.stringify(text).length: quotes plus escapes (two-character, \uXXXX, lone surrogates). */
function stringLength(text: string): number {
  let length = text.length + 2;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c && (c < 0xd800 || c > 0xdfff)) continue;
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x0c || c === 0x0a || c === 0x0d || c === 0x09)
      length += 1;
    else if (c < 0x20) length += 5;
    else if (c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff)
        i++; // a surrogate pair is written as is
      else length += 5;
    } else length += 5; // a lone surrogate is written as \uXXXX
  }
  return length;
}
