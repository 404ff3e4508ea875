import { ENTITY_TYPE_PROPERTY } from "../../schema/build-entity-model.js";
import type { EntityModel, IndexModel } from "../../schema/entity-model.js";
import type { StoredEntity, WireEntity } from "../../store/table-store.js";
import {
  COPY_INDEX_PROPERTY,
  COPY_SOURCE_PK_PROPERTY,
  COPY_SOURCE_RK_PROPERTY,
  type CopyRef,
  deriveCopyRefs,
  refKey,
} from "../core/copy-ref.js";
import { parseEntityType, upcasterOf } from "../core/entity-rows.js";
import type { BlindIndexing, TableNaming } from "../core/requests.js";
import { holdsWrittenState } from "../core/written-state.js";
import { COPY_STAMP_PROPERTY } from "./copy-stamp.js";

/** The type part of a row's discriminator (`"Employee@2"` → `"Employee"`); `undefined` without one. */
export function rowType(row: StoredEntity): string | undefined {
  const tag = row[ENTITY_TYPE_PROPERTY];
  if (typeof tag !== "string") return undefined;
  const at = tag.lastIndexOf("@");
  return at < 0 ? tag : tag.slice(0, at);
}

/** True for a row that is an entity of this model (its type, and not an index copy). */
export function isEntityRowOf(model: EntityModel, row: StoredEntity): boolean {
  return row[COPY_INDEX_PROPERTY] === undefined && rowType(row) === model.type;
}

/**
 * True for a row written by a newer version of the class than this one (a rolling deployment):
 * this code cannot know which copies that version derives, so it leaves the row and its copies
 * (and its intents) to the newer code.
 */
export function isNewerRow(model: EntityModel, row: StoredEntity): boolean {
  const version = parseEntityType(row[ENTITY_TYPE_PROPERTY])?.version;
  return version !== undefined && version > model.version;
}

/**
 * True for an index that keeps one copy row per entity. Index entities (`list` indexes: one row per
 * value listing its members) are kept by their own code (verified by `ListTally`, repaired by `reconcileList`).
 */
export function keepsCopies(index: IndexModel | undefined): boolean {
  return index !== undefined && (index as { list?: boolean }).list !== true;
}

/** True when the ref names a copy (not an index entity) of one of this model's indexes. */
export function isCopyRef(model: EntityModel, ref: CopyRef): boolean {
  return keepsCopies(model.indexes.get(ref.index));
}

/** True for a copy row of one of this model's copy-keeping indexes (optionally: of the named ones only). */
export function isCopyRowOf(model: EntityModel, row: StoredEntity, indexes?: ReadonlySet<string>): boolean {
  const index = row[COPY_INDEX_PROPERTY];
  if (typeof index !== "string" || rowType(row) !== model.type) return false;
  return indexes ? indexes.has(index) : keepsCopies(model.indexes.get(index));
}

/** True when the copy row belongs to the entity with these keys, for this index. */
export function isCopyOf(
  model: EntityModel,
  row: StoredEntity,
  index: string,
  partitionKey: string,
  rowKey: string,
): boolean {
  return (
    row[COPY_INDEX_PROPERTY] === index &&
    rowType(row) === model.type &&
    row[COPY_SOURCE_PK_PROPERTY] === partitionKey &&
    row[COPY_SOURCE_RK_PROPERTY] === rowKey
  );
}

/** The source keys a copy row names, when it names them. */
export function sourceOf(row: StoredEntity): { partitionKey: string; rowKey: string } | undefined {
  const partitionKey = row[COPY_SOURCE_PK_PROPERTY];
  const rowKey = row[COPY_SOURCE_RK_PROPERTY];
  return typeof partitionKey === "string" && typeof rowKey === "string"
    ? { partitionKey, rowKey }
    : undefined;
}

/**
 * The entity a copy row names, with its physical table: the entity's fixed table, or, for a table
 * per period, the period's table its period field names (copies always carry that field). Missing
 * when the row names no entity (or, for a period, no readable period).
 */
export function ownerOf(
  model: EntityModel,
  runner: TableNaming,
  copyTable: string,
  row: StoredEntity,
): { table: string; partitionKey: string; rowKey: string } | undefined {
  const source = sourceOf(row);
  if (!source) return undefined;
  const template = model.tableTemplate;
  if (template === undefined) return { table: runner.tableName(model.table), ...source };
  // Copies in the entity's own period table belong to an entity of that table.
  const index = model.indexes.get(String(row[COPY_INDEX_PROPERTY]));
  if (index?.tableTemplate?.source === template.source) return { table: copyTable, ...source };
  try {
    const values = model.mapper.fromWire(row) as Record<string, unknown>;
    return { table: runner.tableName(template.nameOf(values)), ...source };
  } catch {
    return undefined;
  }
}

/** An entity row as the model sees it now: its wire form (what copies are built from) and what it derives. */
export interface EntityState {
  wire: WireEntity;
  /** Every index row its values call for (what its `_tkIndexKeys` should list). */
  refs: CopyRef[];
  /** Of those, the copies (index entities left out). */
  copies: CopyRef[];
}

/**
 * The entity as the repository reads it (rows of older versions upcast first), its wire form as
 * a write would send it now, and the copies its values call for.
 */
export function entityStateOf<T extends object>(
  model: EntityModel<T>,
  runner: TableNaming & Partial<BlindIndexing>,
  row: StoredEntity,
): EntityState {
  const upcast = upcasterOf(model);
  const entity = model.mapper.fromWire(upcast ? upcast(row) : row);
  const wire = model.mapper.toWire(entity);
  const refs = deriveReadRefs(model, entity, runner);
  return { wire, refs, copies: refs.filter((ref) => isCopyRef(model, ref)) };
}

/**
 * `deriveCopyRefs` for an entity read back: an index whose values cannot form a key (a row written
 * by another client, or before the index existed) simply calls for no copy, instead of failing.
 */
function deriveReadRefs<T extends object>(
  model: EntityModel<T>,
  entity: T,
  naming: TableNaming & Partial<BlindIndexing>,
): CopyRef[] {
  let singles = perIndex.get(model) as Array<EntityModel<T>> | undefined;
  if (!singles) {
    singles = [...model.indexes.values()].map(
      (index) => ({ ...model, indexes: new Map([[index.name, index]]) }) as EntityModel<T>,
    );
    perIndex.set(model, singles as EntityModel[]);
  }
  const refs: CopyRef[] = [];
  for (const single of singles) {
    try {
      refs.push(...deriveCopyRefs(single, entity, naming));
    } catch {
      // No key, no copy.
    }
  }
  return refs;
}

/** Each model as one single-index model per index (so one index's bad value does not hide the others). */
const perIndex = new WeakMap<EntityModel, EntityModel[]>();

/**
 * True when a stored copy holds exactly the values `expected` would write (compared
 * type-insensitively); its stamp (which write made it) is not a value and is left out on both sides.
 */
export function holdsCopy(expected: WireEntity, stored: StoredEntity): boolean {
  const { [COPY_STAMP_PROPERTY]: _expected, ...values } = expected;
  const { [COPY_STAMP_PROPERTY]: _stored, ...row } = stored;
  return holdsWrittenState(values as WireEntity, row as StoredEntity, "replace");
}

/** True when two lists name the same set of rows. */
export function sameRefSet(a: readonly CopyRef[], b: readonly CopyRef[]): boolean {
  const keys = new Set(a.map(refKey));
  const other = new Set(b.map(refKey));
  if (keys.size !== other.size) return false;
  for (const key of keys) if (!other.has(key)) return false;
  return true;
}

/** Sorts refs by table, keys and index (reports are deterministic). */
export function compareRefs(a: CopyRef, b: CopyRef): number {
  return (
    cmp(a.table, b.table) ||
    cmp(a.partitionKey, b.partitionKey) ||
    cmp(a.rowKey, b.rowKey) ||
    cmp(a.index, b.index)
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
