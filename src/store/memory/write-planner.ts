import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  type EntityKeys,
  EntityNotFoundError,
  StoreError,
} from "../../errors.js";
import type { TransactionAction, WireEntity, WriteMode } from "../table-store.js";
import { checkEntityLimits, checkKey } from "./entity-rules.js";
import { etagFromTicks } from "./etag-clock.js";
import type { MemoryTable } from "./memory-table.js";
import type { Mutation } from "./mutation.js";
import { mergePacked, type PackedProperties } from "./property-shape.js";
import { badRequest } from "./service-errors.js";
import { type ParsedEntity, parseWireEntity, StoredRecord } from "./typed-entity.js";

/** A write whose input has been validated (no state consulted yet). */
export type ParsedAction =
  | { readonly kind: "insert"; readonly entity: ParsedEntity }
  | {
      readonly kind: "upsert" | "update";
      readonly entity: ParsedEntity;
      readonly mode: WriteMode;
      readonly ifMatch?: string;
    }
  | {
      readonly kind: "delete";
      readonly partitionKey: string;
      readonly rowKey: string;
      readonly ifMatch: string;
    };

/** A planned write: the mutation to commit and the ETag the caller gets back ("" for deletes). */
export interface PlannedWrite {
  readonly mutation: Mutation;
  readonly etag: string;
}

/**
 * Validates a write request against the service's input rules (keys, names, values, limits; a merge's
 * entity-wide limits wait for the merged result) without looking at stored state.
 */
export function parseAction(action: TransactionAction): ParsedAction {
  switch (action?.kind) {
    case "insert":
      return { kind: "insert", entity: parseChecked(action.entity, "replace") };
    case "upsert":
      return {
        kind: "upsert",
        entity: parseChecked(action.entity, checkMode(action.mode)),
        mode: action.mode,
      };
    case "update":
      return {
        kind: "update",
        entity: parseChecked(action.entity, checkMode(action.mode)),
        mode: action.mode,
        ifMatch: checkIfMatch(action.ifMatch),
      };
    case "delete":
      return {
        kind: "delete",
        partitionKey: checkKey("PartitionKey", action.partitionKey),
        rowKey: checkKey("RowKey", action.rowKey),
        ifMatch: checkIfMatch(action.ifMatch),
      };
    default:
      throw badRequest(
        "InvalidInput",
        `unknown operation kind ${JSON.stringify((action as { kind?: unknown })?.kind)}`,
      );
  }
}

/** Keys of a parsed action. */
export function keysOf(action: ParsedAction): { partitionKey: string; rowKey: string } {
  return action.kind === "delete" ? action : action.entity;
}

/**
 * Checks a parsed write against the table's current state and builds its mutation, stamped with
 * `ticks`. Throws what the service answers: EntityAlreadyExists (409) for an insert over an entity,
 * ResourceNotFound (404) for an update or delete of a missing entity, UpdateConditionNotSatisfied
 * (412) when `ifMatch` is neither `*` nor the current ETag, entity limits (400) on a merged result.
 */
export function planAction(table: MemoryTable, action: ParsedAction, ticks: bigint): PlannedWrite {
  const { partitionKey, rowKey } = keysOf(action);
  const keys: EntityKeys = { table: table.name, partitionKey, rowKey };
  const existing = table.get(partitionKey, rowKey);
  if (action.kind === "insert" && existing !== undefined) throw alreadyExists(keys);
  if (action.kind === "update" || action.kind === "delete") {
    if (existing === undefined) throw notFound(keys);
    if (action.ifMatch !== "*" && action.ifMatch !== existing.etag) throw preconditionFailed(keys);
  }
  if (action.kind === "delete") {
    return { mutation: { op: "delete", table: table.name, partitionKey, rowKey }, etag: "" };
  }
  let properties: PackedProperties = action.entity;
  if (action.kind !== "insert" && action.mode === "merge") {
    if (existing !== undefined) properties = mergePacked(existing, properties);
    checkEntityLimits(partitionKey, rowKey, properties);
  }
  const etag = etagFromTicks(ticks);
  return {
    mutation: {
      op: "put",
      table: table.name,
      record: new StoredRecord(partitionKey, rowKey, ticks, etag, properties),
    },
    etag,
  };
}

function parseChecked(entity: WireEntity, mode: WriteMode): ParsedEntity {
  const parsed = parseWireEntity(entity);
  if (mode === "replace") checkEntityLimits(parsed.partitionKey, parsed.rowKey, parsed);
  return parsed;
}

function checkMode(mode: unknown): WriteMode {
  if (mode !== "replace" && mode !== "merge") {
    throw badRequest("InvalidInput", `write mode must be "replace" or "merge", got ${JSON.stringify(mode)}`);
  }
  return mode;
}

// The service takes `*` or a weak ETag `W/"…"` (any content: one that matches no version is a 412); a
// strong or malformed one is 400 InvalidInput (Azurite issues #1229 and #2013, observed on Azure).
const WEAK_ETAG = /^[wW]\/"(?:[^"\\]|\\.)*"$/;

function checkIfMatch(ifMatch: unknown): string {
  if (typeof ifMatch !== "string" || (ifMatch !== "*" && !WEAK_ETAG.test(ifMatch))) {
    throw badRequest(
      "InvalidInput",
      `If-Match must be a weak ETag W/"…" or "*", got ${JSON.stringify(ifMatch)}`,
    );
  }
  return ifMatch;
}

function alreadyExists(keys: EntityKeys): EntityAlreadyExistsError {
  return new EntityAlreadyExistsError(keys, {
    cause: new StoreError("EntityAlreadyExists: the specified entity already exists", {
      statusCode: 409,
      serviceCode: "EntityAlreadyExists",
    }),
  });
}

function notFound(keys: EntityKeys): EntityNotFoundError {
  return new EntityNotFoundError(keys, {
    cause: new StoreError("ResourceNotFound: the specified resource does not exist", {
      statusCode: 404,
      serviceCode: "ResourceNotFound",
    }),
  });
}

function preconditionFailed(keys: EntityKeys): ConcurrencyError {
  return new ConcurrencyError(keys, {
    cause: new StoreError(
      "UpdateConditionNotSatisfied: the update condition specified in the request was not satisfied",
      {
        statusCode: 412,
        serviceCode: "UpdateConditionNotSatisfied",
      },
    ),
  });
}
