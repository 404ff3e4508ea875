import { SchemaError } from "../errors.js";
import { type FieldTypeLookup, KeyTemplate } from "../keys/key-template.js";
import {
  FORBIDDEN_KEY_CHARACTERS,
  PROPERTY_NAME,
  ServiceLimits,
  TABLE_NAME,
} from "../util/service-limits.js";
import { ENTITY_TYPE_PROPERTY, LIBRARY_PROPERTY_PREFIX } from "../wire/system-properties.js";
import type { ColumnModel, IndexModel, RemoteSummaryModel, SummaryModel } from "./entity-model.js";
import type { EntityOptions, SummaryOptions } from "./entity-options.js";

/** Column types a summary can add up (exactly, for integers: their sums are stored as Int64). */
const SUMMABLE = new Set(["Int32", "Int64", "Double"]);

const RESERVED = new Set(["PartitionKey", "RowKey", "Timestamp", "etag", "ETag", ENTITY_TYPE_PROPERTY]);

/**
 * The RowKey of a remote summary's local row in each source partition: the exact per-partition
 * total that is mirrored to the remote partition. `~tk` starts no summary RowKey a user may choose.
 */
export function hiddenSummaryRowKey(name: string): string {
  return `~tksum~${name}`;
}

/** What a remote summary's template and table are checked against: the entity's own keys and table. */
export interface SummaryKeyContext {
  table: string;
  /** Whether the entity lives in a table per period. */
  periodTable: boolean;
  partitionKey: KeyTemplate;
  /** The key field types of the entity's columns (as for its own key templates). */
  fieldType: (what: string) => FieldTypeLookup;
}

/** What every summary of one entity is checked against. */
interface SummaryContext {
  readonly options: EntityOptions;
  readonly columnsByField: ReadonlyMap<string, ColumnModel>;
  readonly rowKey: KeyTemplate;
  readonly indexes: ReadonlyMap<string, IndexModel>;
  readonly keys: SummaryKeyContext | undefined;
  /** The local RowKeys of the summaries resolved so far, with their summary's name. */
  readonly rowKeys: Map<string, string>;
}

/**
 * Validates `@Entity({ summaries })` into summary models. A summary row lives in the entity's own
 * partition (so it can join the entity's transaction) under a literal RowKey that no entity can have.
 */
export function resolveSummaries(
  entity: string,
  options: EntityOptions,
  columnsByField: ReadonlyMap<string, ColumnModel>,
  rowKey: KeyTemplate,
  indexes: ReadonlyMap<string, IndexModel> = new Map(),
  keys?: SummaryKeyContext,
): Map<string, SummaryModel> {
  const summaries = new Map<string, SummaryModel>();
  const specs = options.summaries;
  if (specs === undefined) return summaries;
  if (specs === null || typeof specs !== "object")
    throw new SchemaError(`${entity}.summaries: an object of summaries by name is required`);
  const entries = Object.entries(specs);
  if (entries.length === 0) return summaries;
  const context: SummaryContext = { options, columnsByField, rowKey, indexes, keys, rowKeys: new Map() };
  for (const [name, spec] of entries) {
    const what = `${entity}.summaries.${name}`;
    if (!PROPERTY_NAME.test(name)) throw new SchemaError(`${what}: summary names are identifiers`);
    if (!spec || typeof spec !== "object") throw new SchemaError(`${what}: options are required`);
    summaries.set(name, resolveSummary(what, name, spec as SummaryOptions, context));
  }
  assertNoRemoteClash(entity, options.table, summaries);
  return summaries;
}

/** One summary's model: where its row is (checked before its values), then what it counts and sums. */
function resolveSummary(
  what: string,
  name: string,
  spec: SummaryOptions,
  context: SummaryContext,
): SummaryModel {
  const summary = spec as SummaryOptions & { partitionKey?: unknown; table?: unknown };
  const { localKey, remote } = placeSummaryRow(what, name, summary, context);
  const targets = new SummaryTargets(what);
  const count = summary.count === undefined ? undefined : targets.claim(summary.count, "count");
  const sums = resolveSums(what, summary.sum, context.columnsByField, targets);
  if (count === undefined && sums.length === 0)
    throw new SchemaError(`${what}: give count and/or sum; an empty summary keeps nothing`);
  if (targets.size + 2 > ServiceLimits.maxProperties)
    throw new SchemaError(`${what}: too many values for one row`);
  return { name, rowKey: localKey, ...(remote ? { remote } : {}), count, sums };
}

/**
 * The summary's row in each source partition: its own literal RowKey, or for a remote summary a hidden
 * one (the exact total it mirrors); no entity, copy or other summary may take it.
 */
function placeSummaryRow(
  what: string,
  name: string,
  summary: SummaryOptions & { partitionKey?: unknown; table?: unknown },
  context: SummaryContext,
): { localKey: string; remote: RemoteSummaryModel | undefined } {
  if (typeof summary.rowKey === "string" && summary.rowKey.startsWith("~tk"))
    throw new SchemaError(`${what}: rowKey '${summary.rowKey}' starts with '~tk', which tablekit reserves`);
  const remote =
    summary.partitionKey !== undefined || summary.table !== undefined
      ? resolveRemote(what, summary, context.options, context.columnsByField, context.keys)
      : undefined;
  // A remote summary's local row (the exact total it mirrors) takes a hidden RowKey in each source partition.
  const localKey = remote ? hiddenSummaryRowKey(name) : summary.rowKey;
  if (!remote) assertSummaryRowKey(what, summary.rowKey, context.rowKey);
  else assertSummaryRowKey(what, localKey, context.rowKey);
  assertNoCopyAt(what, localKey, context.indexes);
  const clash = context.rowKeys.get(localKey);
  if (clash !== undefined)
    throw new SchemaError(`${what}: RowKey '${summary.rowKey}' is also the RowKey of summary ${clash}`);
  context.rowKeys.set(localKey, name);
  return { localKey, remote };
}

/** The property names a summary's values are stored under: valid, not reserved, each used once. */
class SummaryTargets {
  readonly #what: string;
  readonly #claimed = new Set<string>();

  constructor(what: string) {
    this.#what = what;
  }

  get size(): number {
    return this.#claimed.size;
  }

  /** Takes `target` as the property of the value `role` names. */
  claim(target: unknown, role: string): string {
    const what = this.#what;
    if (typeof target !== "string" || !PROPERTY_NAME.test(target) || target.length > 255)
      throw new SchemaError(
        `${what}: ${role} must be a property name (a letter or _ then letters, digits or _)`,
      );
    if (RESERVED.has(target) || target.startsWith(LIBRARY_PROPERTY_PREFIX))
      throw new SchemaError(`${what}: ${role} '${target}' is a reserved property name`);
    if (this.#claimed.has(target))
      throw new SchemaError(`${what}: '${target}' names two values of the summary`);
    this.#claimed.add(target);
    return target;
  }
}

/** The summary's sums: each of a summable column, stored under a property of its own. */
function resolveSums(
  what: string,
  sum: SummaryOptions["sum"],
  columnsByField: ReadonlyMap<string, ColumnModel>,
  targets: SummaryTargets,
): SummaryModel["sums"][number][] {
  const sums: SummaryModel["sums"][number][] = [];
  const spec = sum ?? {};
  if (spec === null || typeof spec !== "object")
    throw new SchemaError(`${what}: sum maps column fields to the names of their sums`);
  for (const [field, target] of Object.entries(spec as Record<string, unknown>)) {
    const column = columnsByField.get(field);
    if (!column) throw new SchemaError(`${what}: sum names unknown field '${field}'`);
    assertSummable(what, field, column);
    sums.push({ column, target: targets.claim(target, `the sum of '${field}'`) });
  }
  return sums;
}

/** A summed column is a scalar number kept in the row, in clear. */
function assertSummable(what: string, field: string, column: ColumnModel): void {
  if (column.large) {
    // By design: the value is in a blob; the summary row is updated in the entity's transaction.
    throw new SchemaError(
      `${what}: '${field}' is a large column (its value is kept in a blob, outside the row); a summary cannot sum it`,
    );
  }
  if (column.encrypted) {
    // By design: the sum would be stored in clear, disclosing what the column hides.
    throw new SchemaError(
      `${what}: '${field}' is encrypted; a summary cannot sum it (the sum would be stored in clear)`,
    );
  }
  if (!SUMMABLE.has(column.type)) {
    throw new SchemaError(
      `${what}: '${field}' is a ${column.type} column; only Int32, Int64 and Double columns can be summed`,
    );
  }
  if (column.series !== undefined) {
    throw new SchemaError(
      `${what}: '${field}' is a data series (${column.series} slots); sum a scalar column instead`,
    );
  }
}

/**
 * A summary in another partition: its partitionKey template may use only fields of the entity's
 * partitionKey, so each source partition adds to exactly one remote partition (its total is kept
 * exact locally, in the source partition's transactions, and mirrored as one row there).
 */
function resolveRemote(
  what: string,
  summary: { rowKey?: unknown; partitionKey?: unknown; table?: unknown },
  options: EntityOptions,
  columnsByField: ReadonlyMap<string, ColumnModel>,
  keys: SummaryKeyContext | undefined,
): RemoteSummaryModel {
  if (keys === undefined)
    throw new SchemaError(`${what}: a summary in another partition needs the entity's keys`);
  if (typeof summary.partitionKey !== "string" || summary.partitionKey === "")
    throw new SchemaError(
      `${what}: partitionKey (a key template of the entity's partitionKey fields, e.g. "totals" or "{region}") is required with table`,
    );
  // Its rows add up every period's partitions, so they live in one table, not in one of the periods'.
  if (keys.periodTable && summary.table === undefined)
    throw new SchemaError(
      `${what}: a summary in another partition of an entity with a table per period ('${options.table}') adds up every period: give it a table of its own (table: "…")`,
    );
  if (summary.table !== undefined) {
    const table = summary.table;
    if (typeof table !== "string" || !TABLE_NAME.test(table) || table.toLowerCase() === "tables")
      throw new SchemaError(
        `${what}: table '${String(table)}' is not a valid table name (3-63 letters or digits, starting with a letter; no table per period)`,
      );
  }
  const own = new Set(keys.partitionKey.fields);
  const lookup = keys.fieldType(`${what}.partitionKey`);
  const template = KeyTemplate.parse(
    summary.partitionKey,
    (field) => {
      const type = lookup(field);
      if (type === undefined || type === "unsupported") return type;
      if (columnsByField.get(field)?.encrypted)
        throw new SchemaError(
          `${what}.partitionKey uses the encrypted column '${field}': keys are stored in clear; keep encrypted columns out of key templates`,
        );
      if (!own.has(field) || keys.partitionKey.hashed?.field === field) {
        throw new SchemaError(
          `${what}.partitionKey: '${field}' is not a field of the entity's partitionKey '${keys.partitionKey.source}'; a remote summary's partition must follow from the source partition`,
        );
      }
      return type;
    },
    `${what}.partitionKey`,
  );
  const rowKey = summary.rowKey;
  if (typeof rowKey !== "string" || rowKey === "" || rowKey.includes("{") || rowKey.includes("}"))
    throw new SchemaError(
      `${what}: rowKey (the literal RowKey prefix of the remote summary's rows) is required`,
    );
  // Room for `~` and a source partition (or its 43-character hash).
  if (FORBIDDEN_KEY_CHARACTERS.test(rowKey) || (rowKey.length + 45) * 2 > ServiceLimits.maxKeyBytes)
    throw new SchemaError(`${what}: rowKey '${rowKey}' is not a valid RowKey prefix`);
  return { partitionKey: template, table: (summary.table as string | undefined) ?? options.table, rowKey };
}

/**
 * A remote summary's rows (`<rowKey>~…`) must not be another summary's row of the same table, whatever
 * partition they land in: neither the same RowKey nor one inside its `~` range.
 */
function assertNoRemoteClash(
  entity: string,
  table: string,
  summaries: ReadonlyMap<string, SummaryModel>,
): void {
  const placed = [...summaries.values()].map((s) => ({
    name: s.name,
    table: (s.remote?.table ?? table).toLowerCase(),
    key: s.remote?.rowKey ?? s.rowKey,
    range: s.remote !== undefined,
  }));
  for (const a of placed) {
    if (!a.range) continue;
    for (const b of placed) {
      if (a === b || a.table !== b.table) continue;
      if (b.key === a.key || b.key.startsWith(`${a.key}~`) || (b.range && a.key.startsWith(`${b.key}~`))) {
        throw new SchemaError(
          `${entity}.summaries.${a.name}: its rows ('${a.key}~…' in table '${a.table}') could take summary ${b.name}'s RowKey '${b.key}'; give one of them another rowKey`,
        );
      }
    }
  }
}

/**
 * Copies and index entities of same-partition indexes share the summary row's partition: none may be
 * able to take its RowKey (they are written with the entity, so a clash would corrupt both rows).
 */
function assertNoCopyAt(what: string, key: string, indexes: ReadonlyMap<string, IndexModel>): void {
  for (const index of indexes.values()) {
    if (!index.intraPartition) continue;
    // A list index's shards add `~001`, `~002`… to the value's RowKey.
    const base = index.list ? key.replace(/~\d+$/, "") : key;
    if (index.rowKey.decode(key) !== undefined || index.rowKey.decode(base) !== undefined) {
      throw new SchemaError(
        `${what}: rowKey '${key}' could be the RowKey of a row of index ${index.name} ('${index.rowKey.source}') in the same partition; choose one outside that index's RowKey space`,
      );
    }
  }
}

/**
 * The RowKey must be a valid literal key; and where the entity's RowKey template has a literal prefix, no
 * entity may be able to take it (an entity whose template has none is checked on each write instead).
 */
function assertSummaryRowKey(what: string, key: unknown, rowKey: KeyTemplate): asserts key is string {
  if (typeof key !== "string" || key === "")
    throw new SchemaError(`${what}: rowKey (the summary row's literal RowKey, e.g. "summary") is required`);
  if (key.includes("{") || key.includes("}"))
    throw new SchemaError(`${what}: rowKey '${key}' must be literal text (one summary row per partition)`);
  if (FORBIDDEN_KEY_CHARACTERS.test(key) || key.length * 2 > ServiceLimits.maxKeyBytes)
    throw new SchemaError(`${what}: rowKey '${key}' is not a valid RowKey`);
  if (rowKey.literalPrefix !== "" && rowKey.decode(key) !== undefined) {
    throw new SchemaError(
      `${what}: rowKey '${key}' could be an entity's RowKey ('${rowKey.source}'); choose one outside the entity's RowKey space`,
    );
  }
}
