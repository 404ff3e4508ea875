import { randomBytes } from "node:crypto";
import { ValidationError } from "../../errors.js";
import { blindSidecars } from "../../schema/blind-index-plan.js";
import type { EntityModel } from "../../schema/entity-model.js";
import {
  assertWideRowKey,
  MAX_WIDE_PARTS,
  parseWideEtag,
  partRowKey,
  splitWide,
  wideEtag,
} from "../../serialization/wide-rows.js";
import type { StoredEntity, TransactionAction, WireEntity, WriteResult } from "../../store/table-store.js";
import { describeBytes } from "../../util/store-limits.js";
import { WIDE_PART_PROPERTY } from "../../wire/system-properties.js";
import { batchBodyBytesOver } from "./payload-size.js";
import type { Limited, Requests } from "./requests.js";
import { readWide } from "./wide-reads.js";
import { holdsWrittenState } from "./written-state.js";

/**
 * How one entity lies in its table: one row, or (a wide entity) several rows of one partition. The
 * stages that write an entity together with other rows of its entity group transaction (index
 * copies, summary rows) see the entity through this, so a wide entity's rows ride in the same
 * transaction as a one-row entity's row would, and read back whole (its ETag lists every row's).
 */
export interface EntityLayout {
  readonly wide: boolean;
  /**
   * The entity whole, as stored (a wide entity's rows assembled), or `undefined` when absent.
   * `select`: the properties the caller needs (a wide entity's rows are read with those only, e.g.
   * `KEYS_ONLY` for its version; one row is read whole).
   */
  read(partitionKey: string, rowKey: string, select?: readonly string[]): Promise<StoredEntity | undefined>;
  /**
   * The actions storing `row` (the whole entity) over the version `ifMatch` (undefined: absent,
   * inserted; `"*"`: not known, as in an explained write, which lists the new rows only).
   */
  write(row: WireEntity, ifMatch: string | undefined): TransactionAction[];
  /** The actions deleting the version `ifMatch` (a real ETag; `"*"` in an explained write: the first row only). */
  remove(partitionKey: string, rowKey: string, ifMatch: string): TransactionAction[];
  /** The entity's new ETag from the results of its own actions (the first ones of the transaction). */
  etagOf(actions: readonly TransactionAction[], results: readonly WriteResult[]): string;
  /**
   * After a transaction known to have committed without its answer: the entity's ETag if it still
   * holds what `actions` wrote, else `""`.
   */
  appliedEtag(actions: readonly TransactionAction[]): Promise<string>;
}

/** How a model's entities are written and removed as rows: what a planner needs of a layout (no request). */
export type EntityRows = Pick<EntityLayout, "wide" | "write" | "remove" | "etagOf">;

/** The layout of a model's entities in `table`. */
export function entityLayout(
  model: EntityModel<object>,
  runner: Requests & Limited,
  table: string,
): EntityLayout {
  const read = (partitionKey: string, rowKey: string, select?: readonly string[]) =>
    readEntity(model, runner, table, partitionKey, rowKey, select);
  return { ...entityRows(model, runner), read, appliedEtag: appliedEtagOf(model, read) };
}

/** Only the keys: what a write that replaces every row of a wide entity needs to know of them (their ETags). */
export const KEYS_ONLY: readonly string[] = ["PartitionKey", "RowKey"];

/**
 * One entity whole, as stored (a wide entity's rows assembled, its ETag listing every row's), or
 * `undefined`. `select`: a wide entity's rows are read with these properties only.
 */
export function readEntity(
  model: EntityModel<object>,
  runner: Requests,
  table: string,
  partitionKey: string,
  rowKey: string,
  select?: readonly string[],
): Promise<StoredEntity | undefined> {
  if (!model.wide) return runner.run("get", table, (s) => s.getEntity(table, partitionKey, rowKey));
  assertWideRowKey(model.name, rowKey);
  return readWide(runner, table, partitionKey, rowKey, select);
}

/** The rows of a model's entities: one, or (a wide entity) its parts within the backend's limits. */
export function entityRows(model: EntityModel<object>, limited: Limited): EntityRows {
  return model.wide ? wideRows(model, limited) : ONE_ROW;
}

const ONE_ROW: EntityRows = {
  wide: false,
  write: (row, ifMatch) => [
    ifMatch === undefined
      ? { kind: "insert", entity: row }
      : { kind: "update", entity: row, mode: "replace", ifMatch },
  ],
  remove: (partitionKey, rowKey, ifMatch) => [{ kind: "delete", partitionKey, rowKey, ifMatch }],
  etagOf: (_actions, results) => results[0]?.etag ?? "",
};

/**
 * The last row split and its parts (a row object is one write's): the check of a write before its
 * first read and its commit right after send the same rows, under one write id, split once. One
 * slot, not a map by row: nothing is kept alive beyond the latest write (a write interleaved with
 * another's splits its row again).
 */
let lastSplit: { row: WireEntity; limits: object; parts: WireEntity[] } | undefined;

function wideRows(model: EntityModel<object>, { limits }: Limited): EntityRows {
  const maxParts = Math.min(MAX_WIDE_PARTS, limits.maxTransactionOperations);
  const split = (row: WireEntity): WireEntity[] => {
    if (lastSplit?.row === row && lastSplit.limits === limits) return lastSplit.parts;
    const parts = splitWide(model.name, row, limits, newWriteId(), maxParts, blindSidecars(model.columns));
    lastSplit = { row, limits, parts };
    return parts;
  };
  return {
    wide: true,
    write(row, ifMatch) {
      const parts = split(row);
      const stored =
        ifMatch === undefined
          ? []
          : ifMatch === "*"
            ? parts.map(() => "*")
            : parseWideEtag(model.name, ifMatch);
      return wideRowActions(row.partitionKey, row.rowKey, parts, stored);
    },
    // "*": the stored rows are not known (an explained write; a write reads them first): its first row.
    remove: (partitionKey, rowKey, ifMatch) =>
      wideRowActions(partitionKey, rowKey, [], ifMatch === "*" ? ["*"] : parseWideEtag(model.name, ifMatch)),
    etagOf(actions, results) {
      const etags: string[] = [];
      actions.forEach((action, index) => {
        if (action.kind !== "delete" && isPartAction(action))
          etags.push((results[index] as WriteResult).etag);
      });
      return etags.length === 0 ? "" : wideEtag(etags);
    },
  };
}

/** After a transaction known to have committed without its answer: the entity's ETag if it holds what was written. */
function appliedEtagOf(model: EntityModel<object>, read: EntityLayout["read"]): EntityLayout["appliedEtag"] {
  if (!model.wide) {
    return async (actions) => {
      const action = actions[0];
      if (action === undefined || action.kind === "delete") return "";
      const stored = await read(action.entity.partitionKey, action.entity.rowKey);
      return stored && holdsWrittenState(action.entity, stored, "replace") ? stored.etag : "";
    };
  }
  return async (actions) => {
    const first = actions[0];
    if (first === undefined || first.kind === "delete") return "";
    const stored = await read(first.entity.partitionKey, first.entity.rowKey.slice(0, -3));
    // Every part's values still stored (the assembled entity drops the part markers and suffixes).
    const holds = actions.every((action) => {
      if (!isPartAction(action)) return true;
      const { [WIDE_PART_PROPERTY]: _marker, ...values } = (action as { entity: WireEntity }).entity;
      return holdsWrittenState(values as WireEntity, stored, "merge");
    });
    return stored !== undefined && holds ? stored.etag : "";
  };
}

/** True for an action on one of a wide entity's rows (it carries the part marker). */
export function isPartAction(action: TransactionAction): boolean {
  return action.kind !== "delete" && typeof action.entity[WIDE_PART_PROPERTY] === "string";
}

/**
 * The actions replacing a wide entity's stored rows (`stored`: their ETags in part order, empty when
 * absent) by `parts`: rows both have are replaced conditional on their ETag, new rows inserted, rows of
 * a longer stored version deleted conditional on theirs. Writes come first, so results line up with parts.
 */
export function wideRowActions(
  partitionKey: string,
  base: string,
  parts: readonly WireEntity[],
  stored: readonly string[],
): TransactionAction[] {
  const actions: TransactionAction[] = parts.map((entity, index) => {
    const ifMatch = stored[index];
    return ifMatch === undefined
      ? { kind: "insert", entity }
      : { kind: "update", entity, mode: "replace", ifMatch };
  });
  for (let index = parts.length; index < stored.length; index++) {
    actions.push({
      kind: "delete",
      partitionKey,
      rowKey: partRowKey(base, index),
      ifMatch: stored[index] as string,
    });
  }
  return actions;
}

/** A fresh id for one wide write: every row it stores carries it. */
export function newWriteId(): string {
  return randomBytes(9).toString("base64url");
}

/** Room kept per companion row (a summary row: its keys, count and sums) when sizing a transaction before it is planned. */
const COMPANION_ROW_BYTES = 4096;

/**
 * `ValidationError` before any request when one entity's transaction (its rows, its same-partition
 * copies and list entities, and `reserved` companion rows such as summary rows) cannot be one entity
 * group transaction: at most 100 operations and a 4 MiB body (the service's rules for a $batch).
 */
export function assertEntityGroupFits(
  runner: Limited,
  entity: string,
  table: string,
  rowKey: string,
  actions: readonly TransactionAction[],
  reserved: number,
): void {
  const limits = runner.limits;
  const count = actions.length + reserved;
  if (count > limits.maxTransactionOperations) {
    throw new ValidationError(
      "entity-transaction-operations",
      `${entity} (RowKey '${rowKey}'): this write takes ${count} operations in one entity group transaction (the entity's rows, its copies in the partition and ${reserved} summary row(s)); one transaction carries at most ${limits.maxTransactionOperations}`,
    );
  }
  const budget = limits.maxTransactionBytes - reserved * COMPANION_ROW_BYTES;
  const bytes = batchBodyBytesOver(limits, table, actions, budget);
  if (bytes !== undefined) {
    throw new ValidationError(
      "entity-transaction-payload",
      `${entity} (RowKey '${rowKey}'): this write's rows make a $batch body of ${bytes} bytes${reserved > 0 ? ` plus ${reserved} summary row(s)` : ""}; an entity group transaction's request body may be at most ${describeBytes(limits.maxTransactionBytes)}`,
    );
  }
}
