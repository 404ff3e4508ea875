import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  type TransactionError,
} from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity, TransactionAction, WireEntity, WriteMode } from "../../store/table-store.js";
import { upcasterOf } from "../core/entity-rows.js";
import { isSummarizedRow } from "./summary-row.js";

/** One entity write as the caller asked for it; `ifMatch` undefined or `"*"` means unconditional. */
export type SummarizedWrite =
  | { kind: "insert"; wire: WireEntity }
  | { kind: "upsert"; wire: WireEntity; mode: WriteMode }
  | { kind: "update"; wire: WireEntity; mode: WriteMode; ifMatch: string }
  | { kind: "delete"; partitionKey: string; rowKey: string; ifMatch: string | undefined };

/** The action of one write given what is stored, conditional on exactly that state, and the rows before and after. */
export function planWrite(
  model: EntityModel<object>,
  table: string,
  partitionKey: string,
  write: SummarizedWrite,
  stored: StoredEntity | undefined,
): PlannedWrite {
  const keys = {
    table,
    partitionKey,
    rowKey: write.kind === "delete" ? write.rowKey : write.wire.rowKey,
  };
  const before = stored && isSummarizedRow(model, stored) ? upcast(model, stored) : undefined;
  switch (write.kind) {
    case "insert":
      return {
        action: { kind: "insert", entity: write.wire },
        before: undefined,
        after: write.wire,
        existed: false,
      };
    case "upsert":
      if (!stored)
        return {
          action: { kind: "insert", entity: write.wire },
          before,
          after: write.wire,
          existed: false,
        };
      return updateOf(write, stored, before);
    case "update":
      if (!stored) throw new EntityNotFoundError(keys);
      if (write.ifMatch !== "*" && write.ifMatch !== stored.etag) throw new ConcurrencyError(keys);
      return updateOf(write, stored, before);
    case "delete":
      if (!stored) return { action: undefined, before: undefined, after: undefined, existed: false };
      if (write.ifMatch !== undefined && write.ifMatch !== "*" && write.ifMatch !== stored.etag)
        throw new ConcurrencyError(keys);
      return {
        action: { kind: "delete", partitionKey, rowKey: write.rowKey, ifMatch: stored.etag },
        before,
        after: undefined,
        existed: true,
      };
  }
}

/** An upsert or update of a stored entity: conditional on the version read (its summary delta's). */
function updateOf(
  write: Extract<SummarizedWrite, { kind: "upsert" | "update" }>,
  stored: StoredEntity,
  before: StoredEntity | undefined,
): PlannedWrite {
  return {
    action: { kind: "update", entity: write.wire, mode: write.mode, ifMatch: stored.etag },
    before,
    after: write.mode === "merge" ? merged(stored, write.wire) : write.wire,
    existed: true,
  };
}

/** A failed entity action: another writer changed it after our read (go again where the caller did not condition it), or the caller's error. */
export function raceOrError(
  table: string,
  error: TransactionError,
  partitionKey: string,
  write: SummarizedWrite,
): "retry" {
  const rowKey = write.kind === "delete" ? write.rowKey : write.wire.rowKey;
  const keys = { table, partitionKey, rowKey };
  const status = error.statusCode;
  if (write.kind === "insert") {
    if (status === 409) throw new EntityAlreadyExistsError(keys, { cause: error });
    throw error;
  }
  if (status !== 412 && status !== 404 && status !== 409) throw error;
  const conditioned =
    (write.kind === "update" || write.kind === "delete") &&
    write.ifMatch !== undefined &&
    write.ifMatch !== "*";
  if (!conditioned) return "retry";
  if (status === 404 && write.kind === "update") throw new EntityNotFoundError(keys, { cause: error });
  if (status === 404) return "retry";
  throw new ConcurrencyError(keys, { cause: error });
}

function upcast(model: EntityModel<object>, stored: StoredEntity): StoredEntity {
  const upcaster = upcasterOf(model);
  return upcaster ? upcaster(stored) : stored;
}

/** One write planned against what is stored. */
export interface PlannedWrite {
  action: TransactionAction | undefined;
  /** The entity row before the write (undefined: absent, or another type's row). */
  before: WireEntity | undefined;
  /** The entity row after the write (undefined: deleted). */
  after: WireEntity | undefined;
  /** Whether the entity was there before (known for deletes, which read it). */
  existed: boolean;
}

/**
 * A merge's result as the service stores it: the stored row as it is (not upcast: the merged row carries
 * the current version's discriminator and is read without upcasting) with the sent properties laid over it.
 */
function merged(stored: StoredEntity, sent: WireEntity): WireEntity {
  const row: WireEntity = { ...stored };
  for (const [name, value] of Object.entries(sent)) {
    if (value !== undefined && value !== null) row[name] = value;
  }
  return row;
}
