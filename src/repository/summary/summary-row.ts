import { SchemaError } from "../../errors.js";
import type { EntityModel, SummaryModel } from "../../schema/entity-model.js";
import type { StoredEntity, TypedValue, WireEntity, WireValue } from "../../store/table-store.js";
import { COPY_INDEX_PROPERTY, ENTITY_TYPE_PROPERTY, SUMMARY_PROPERTY } from "../../wire/system-properties.js";

/** The number of writes the row has seen: each write of the summary adds one. */
const SEQUENCE_PROPERTY = "_tkSummarySeq";
/** The tokens of the latest writes, oldest first (see `recentWrites`). */
const RECENT_PROPERTY = "_tkSummaryOps";
/** The discriminator of summary rows: not a valid entity type, so no class can claim it. */
const SUMMARY_TYPE = "tablekit:summary";
/**
 * How many write tokens a summary row remembers. A write whose answer was lost is settled by looking
 * for its token: present, it committed; absent while the window still covers its turn, it did not.
 */
const RECENT_WRITES = 32;

/**
 * A summary's values: the count and every integer sum as exact `bigint`s (stored as Int64), Double
 * sums as numbers (stored as Double; incremental float sums may differ from a recount by rounding).
 */
export type SummaryTotals = Map<string, bigint | number>;

/** A summary row as read: its values and its write log, with the ETag that conditions the next write. */
export interface SummaryState {
  /** Undefined while the row does not exist (the next write inserts it). */
  etag: string | undefined;
  totals: SummaryTotals;
  /** Writes applied so far. */
  sequence: bigint;
  /** Tokens of the latest writes, oldest first; the last one is the write that made `sequence`. */
  recent: string[];
}

/** The values of an empty summary (no row yet): zero everywhere. */
export function zeroTotals(summary: SummaryModel): SummaryTotals {
  const totals: SummaryTotals = new Map();
  if (summary.count !== undefined) totals.set(summary.count, 0n);
  for (const { column, target } of summary.sums) totals.set(target, column.type === "Double" ? 0 : 0n);
  return totals;
}

/**
 * What a summary row's marker holds: the entity type and the summary's name (`Employee:perDepartment`;
 * `:` is in neither), so two types sharing a table never take each other's summary rows for their own.
 */
export function summaryMarker(model: EntityModel, summary: SummaryModel): string {
  return `${model.type}:${summary.name}`;
}

/**
 * The summary as stored in `row` (zeros where absent); the state of a missing row when `row` is undefined.
 * A row at the summary's key that is not this summary's (another type's summary or entity under the same
 * RowKey in a shared table) is a `SchemaError`: counting on from its values would corrupt both.
 */
export function readSummaryState(
  model: EntityModel,
  summary: SummaryModel,
  row: StoredEntity | undefined,
): SummaryState {
  const totals = zeroTotals(summary);
  if (row === undefined) return { etag: undefined, totals, sequence: 0n, recent: [] };
  if (row[SUMMARY_PROPERTY] !== summaryMarker(model, summary)) {
    throw new SchemaError(
      `${model.name}: the row at RowKey '${summary.rowKey}' of PartitionKey '${row.partitionKey}' is not summary ${summary.name}'s (it holds ${
        row[SUMMARY_PROPERTY] === undefined ? "an entity" : `summary '${String(row[SUMMARY_PROPERTY])}'`
      }); give the summary a rowKey of its own`,
    );
  }
  for (const [name, zero] of totals) {
    totals.set(name, typeof zero === "number" ? toNumber(row[name]) : toBigInt(row[name]));
  }
  const recent = typeof row[RECENT_PROPERTY] === "string" ? (row[RECENT_PROPERTY] as string).split(",") : [];
  return { etag: row.etag, totals, sequence: toBigInt(row[SEQUENCE_PROPERTY]), recent };
}

/**
 * Whether a stored row counts in the entity's summaries: a row of its type (any version), or an
 * untyped row (written by another client) whose RowKey the entity's template decodes; never an index
 * copy or a summary row. Writes and `verifySummaries` apply the same rule.
 */
export function isSummarizedRow(model: EntityModel, row: StoredEntity): boolean {
  if (row[COPY_INDEX_PROPERTY] !== undefined || row[SUMMARY_PROPERTY] !== undefined) return false;
  const tag = row[ENTITY_TYPE_PROPERTY];
  if (typeof tag !== "string") return model.rowKey.decode(row.rowKey) !== undefined;
  return tag === model.type || (tag.startsWith(model.type) && tag.lastIndexOf("@") === model.type.length);
}

/** What one entity adds to a summary: 1 and its column values; nothing for an absent row. */
export function contributionOf(summary: SummaryModel, row: WireEntity | undefined): SummaryTotals {
  const totals = zeroTotals(summary);
  if (row === undefined) return totals;
  if (summary.count !== undefined) totals.set(summary.count, 1n);
  for (const { column, target } of summary.sums) {
    const value = row[column.property];
    totals.set(target, column.type === "Double" ? toNumber(value) : toBigInt(value));
  }
  return totals;
}

/** `into` plus `sign` × `delta`, value by value. */
export function addTotals(into: SummaryTotals, delta: SummaryTotals, sign: 1 | -1): SummaryTotals {
  const result: SummaryTotals = new Map(into);
  for (const [name, value] of delta) {
    const current = result.get(name) ?? (typeof value === "number" ? 0 : 0n);
    result.set(
      name,
      typeof current === "bigint" && typeof value === "bigint"
        ? current + (sign === 1 ? value : -value)
        : Number(current) + sign * Number(value),
    );
  }
  return result;
}

/** Every value made non-negative (the scale against which Double rounding is judged). */
export function absoluteTotals(totals: SummaryTotals): SummaryTotals {
  const result: SummaryTotals = new Map();
  for (const [name, value] of totals)
    result.set(name, typeof value === "bigint" ? (value < 0n ? -value : value) : Math.abs(value));
  return result;
}

/** True when both hold the same values (Double sums within rounding of `scale`, the sum of magnitudes). */
export function sameTotals(a: SummaryTotals, b: SummaryTotals, scale?: SummaryTotals): boolean {
  for (const [name, value] of a) {
    const other = b.get(name);
    if (typeof value === "bigint" || typeof other === "bigint") {
      if (value !== other) return false;
      continue;
    }
    const magnitude = Math.max(1, Math.abs(Number(scale?.get(name) ?? value)));
    if (Math.abs(value - Number(other)) > magnitude * 1e-9) return false;
  }
  return true;
}

/** The row after one more write: new values, the sequence advanced and this write's token logged. */
export function nextSummaryRow(
  model: EntityModel,
  summary: SummaryModel,
  partitionKey: string,
  state: SummaryState,
  totals: SummaryTotals,
  token: string,
): { row: WireEntity; next: Omit<SummaryState, "etag"> } {
  const recent = [...state.recent, token].slice(-RECENT_WRITES);
  const sequence = state.sequence + 1n;
  const row: WireEntity = {
    partitionKey,
    rowKey: summary.rowKey,
    [ENTITY_TYPE_PROPERTY]: SUMMARY_TYPE,
    [SUMMARY_PROPERTY]: summaryMarker(model, summary),
    [SEQUENCE_PROPERTY]: sequence,
    [RECENT_PROPERTY]: recent.join(","),
  };
  for (const [name, value] of totals)
    row[name] = typeof value === "bigint" ? value : { type: "Double", value };
  return { row, next: { totals, sequence, recent } };
}

/** The source partition a remote summary's contribution row mirrors (see `remote-summary.ts`). */
export const SOURCE_PROPERTY = "_tkSummarySource";

/**
 * A remote summary's contribution row: the absolute totals of one source partition's local row at
 * version `sequence` (that row's write count), so writing it again, or an older one, changes nothing.
 */
export function contributionRow(
  model: EntityModel,
  summary: SummaryModel,
  keys: { partitionKey: string; rowKey: string; source: string },
  totals: SummaryTotals,
  sequence: bigint,
): WireEntity {
  const row: WireEntity = {
    partitionKey: keys.partitionKey,
    rowKey: keys.rowKey,
    [ENTITY_TYPE_PROPERTY]: SUMMARY_TYPE,
    [SUMMARY_PROPERTY]: summaryMarker(model, summary),
    [SEQUENCE_PROPERTY]: sequence,
    [SOURCE_PROPERTY]: keys.source,
  };
  for (const [name, value] of totals)
    row[name] = typeof value === "bigint" ? value : { type: "Double", value };
  return row;
}

/**
 * Whether the write that logged `token` as the row's write number `sequence` committed: `true` (the row
 * logs it), `false` (the log still covers that turn and another write took it, or the row has not got
 * that far), `undefined` (it fell out of the log: nobody can tell).
 */
export function committedWrite(state: SummaryState, sequence: bigint, token: string): boolean | undefined {
  if (state.recent.includes(token)) return true;
  if (state.sequence < sequence) return false;
  const oldestLogged = state.sequence - BigInt(state.recent.length) + 1n;
  return sequence >= oldestLogged ? false : undefined;
}

/** A summary's values by name, as `repository.summary` returns them. */
export type SummaryValues = Record<string, number | bigint>;

/** The summary's values as the caller sees them: counts and Int32/Double sums as numbers, Int64 sums as bigint. */
export function publicValues(summary: SummaryModel, totals: SummaryTotals): SummaryValues {
  const values: SummaryValues = {};
  if (summary.count !== undefined) values[summary.count] = Number(totals.get(summary.count) ?? 0n);
  for (const { column, target } of summary.sums) {
    const value = totals.get(target) ?? 0;
    values[target] = column.type === "Int64" ? BigInt(value) : Number(value);
  }
  return values;
}

function toBigInt(value: WireValue | undefined): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : 0n;
  const text = typeof value === "string" ? value : isTyped(value) ? String(value.value) : undefined;
  return text !== undefined && /^-?\d+$/.test(text) ? BigInt(text) : 0n;
}

function toNumber(value: WireValue | undefined): number {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  const text = typeof value === "string" ? value : isTyped(value) ? String(value.value) : undefined;
  const parsed = text === undefined ? Number.NaN : Number(text);
  return Number.isFinite(parsed) ? parsed : 0;
}

function isTyped(value: WireValue | undefined): value is TypedValue {
  return value !== null && typeof value === "object" && "type" in value && "value" in value;
}
