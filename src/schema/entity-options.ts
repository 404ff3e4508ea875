import type { ColumnType } from "../wire/column-type.js";

/** Options of `@Column`. */
export interface ColumnOptions {
  /** The stored type; inferred from `design:type` metadata when omitted (tsc only, not tsx/esbuild). */
  type?: ColumnType | undefined;
  /** The property name stored in the table (default: the field name). */
  name?: string | undefined;
  /**
   * For `Json` columns: the class of the value (or of each array element). It is rebuilt as an
   * instance of that class when read (with `class-transformer`, so nested `@Type` decorators work).
   */
  jsonClass?: (new () => object) | undefined;
  /**
   * A data series: the field is an array of this many values of `type`, stored one property per
   * slot (`hourly00` … `hourly23` for `series: 24`; the stored prefix is `name` when given), so
   * `repository.patch(key, { hourly: { 13: 5 } })` changes one slot. Not for key or index fields.
   */
  series?: number | undefined;
  /**
   * Encrypts the value before it leaves the process (AES-256-GCM under a fresh data key per write,
   * wrapped by the context's `encryption` key resolver); stored as Binary, so it cannot appear in a
   * key template, an index key or a filter. Any column type may be encrypted.
   */
  encrypt?: boolean | undefined;
  /**
   * A blind index of an encrypted `String`, `Guid`, `Int32` or `Int64` column (`encrypt: true`): the row
   * also keeps a keyed HMAC-SHA-256 of the value, truncated to `bits`, so `where(field, "eq", value)`
   * finds rows without decrypting the table, and an index key may name the column (it then holds the
   * untruncated HMAC). Needs the context's `encryption.blindIndexKey`. See docs/encryption-and-sas.md.
   */
  blindIndex?: boolean | BlindIndexOptions | undefined;
  /**
   * A large value (`type` "Binary", "Json" or "String" only): any size, kept in Blob Storage with a
   * reference in the row (see README, "Large values"). Not allowed in a key template, an index or a `where`.
   */
  large?: boolean | undefined;
}

/** Options of `@Column({ blindIndex })`. */
export interface BlindIndexOptions {
  /**
   * Bits of the HMAC kept in the row (8 to 64; default 16, or with `expectedRows` the most that
   * CipherSweet's planner deems safe for that many rows). Fewer bits: more false matches read and
   * dropped, less learnt by whoever sees the table.
   */
  bits?: number | undefined;
  /** How many rows the table is expected to hold: `bits` above the safe maximum for it is a `SchemaError`. */
  expectedRows?: number | undefined;
}

/** The column types a large value may have. */
export type LargeColumnType = "Binary" | "Json" | "String";

/** Rejects `large: true` beside a `type` that cannot be large, at compile time (`SchemaError` at run time). */
export type LargeColumnCheck<O> = O extends { large: true; type: infer T }
  ? [T] extends [LargeColumnType | undefined]
    ? unknown
    : { type: LargeColumnType }
  : unknown;

/** Options of one secondary index (see the indexes issue); validated at definition time. */
export interface IndexOptions<T = unknown> {
  /** Another table for the copies (default: the entity's table). */
  table?: string | undefined;
  /** Key template of the copies' PartitionKey (default: the entity's). */
  partitionKey?: string | undefined;
  /** Key template of the copies' RowKey. */
  rowKey: string;
  /** Fields the copy carries (default: all). Key fields of the entity are always carried. */
  project?: readonly (unknown extends T ? string : keyof T & string)[] | undefined;
  /**
   * A sparse index: only entities for which this returns true get a copy. Typed by `@Entity<T>`;
   * otherwise annotate the parameter (`when: (e: Employee) => …`), checked against the class.
   */
  when?: ((entity: unknown extends T ? never : T) => boolean) | undefined;
  /** Unique (default) or not. */
  unique?: boolean | undefined;
  /**
   * An index entity instead of copies: one row per value listing the keys of every entity that
   * has it (non-unique values: all employees named Jones). The RowKey template holds the value.
   * `index(name).find(value)` reads the list and fetches the entities in parallel.
   */
  list?: boolean | undefined;
}

/** The fields of `T` a summary can add up: numbers and bigints (`string` when `T` is not given). */
export type SummableField<T> = unknown extends T
  ? string
  : {
      [K in keyof T & string]-?: NonNullable<T[K]> extends number | bigint ? K : never;
    }[keyof T & string];

/** The fields of `T` that hold a `Date` (optional ones too): what `expiresAt` may name (`string` when `T` is not given). */
export type DateField<T> = unknown extends T
  ? string
  : {
      [K in keyof T & string]-?: [NonNullable<T[K]>] extends [never]
        ? never
        : NonNullable<T[K]> extends Date
          ? K
          : never;
    }[keyof T & string];

/**
 * One summary (the denormalization pattern's aggregate row): a row per partition, in the entity's
 * partition under `rowKey`, holding the count of the partition's entities and sums of numeric columns,
 * kept exact in the same entity group transaction as every write of the entity.
 */
export interface SummaryOptions<T = unknown> {
  /**
   * The summary row's RowKey in each partition (literal text, outside the entity's RowKey space), e.g. `"summary"`;
   * for a summary in another partition, the RowKey prefix of its rows there (`"employees"` → `employees~<source partition>`).
   */
  rowKey: string;
  /**
   * Keeps the summary in another partition, eventually consistent (see README, "Summaries"): a key template
   * of fields of the entity's partitionKey (`"totals"`, `"{region}"`); every partition mapping to it adds up there.
   */
  partitionKey?: string | undefined;
  /** With `partitionKey`: the table of the remote summary (default the entity's table; the context's prefix applies). */
  table?: string | undefined;
  /** The name under which the count of entities is stored and returned (optional). */
  count?: string | undefined;
  /** Numeric columns to add up, each mapped to the name its sum is stored and returned under. */
  sum?: { [K in SummableField<T>]?: string } | undefined;
}

/** Options of `@Entity`; `T` (the entity type, given as `@Entity<T>(…)`) types index `when` and `project`. */
export interface EntityOptions<T = unknown> {
  /** The table name (Azure rules: 3-63 letters and digits, starting with a letter). */
  table: string;
  /** Key template of the PartitionKey, e.g. `"{department}"`. */
  partitionKey: string;
  /** Key template of the RowKey, e.g. `"empid_{employeeId:6}"`. */
  rowKey: string;
  /** Secondary indexes by name. */
  indexes?: Record<string, IndexOptions<T>> | undefined;
  /**
   * Summaries by name: per partition, the count of entities and sums of columns, kept exact in each
   * write's entity group transaction; read with `repository.summary(name, partial)`.
   * @example
   * summaries: { perDepartment: { rowKey: "summary", count: "employees", sum: { salary: "totalSalary" } } }
   */
  summaries?: Record<string, SummaryOptions<T>> | undefined;
  /** The discriminator stored in every row (default: the class name; set it where a bundler minifies names). */
  type?: string | undefined;
  /**
   * Schema version stored with the discriminator (default 1): every row records `EntityType` =
   * `"type@version"`. Reading a row of an older version runs `upcast` (when given) before mapping;
   * without an upcaster, older rows map as they are (missing columns stay `undefined`). A row of a
   * *newer* version than the class is still returned, mapped as it is (properties the class does not
   * know are ignored): reading never fails on version skew during a rolling deployment. Writing such
   * an entity back with `replace` drops what the older class does not know and stamps its older
   * version, so prefer `{ mode: "merge" }` where old and new code run side by side.
   */
  version?: number | undefined;
  /**
   * Upgrades the stored properties of a row written by an older `version` (the `fromVersion` its
   * `EntityType` records) to the shape of the current version; the result then goes through the
   * normal mapping. `properties` is a fresh copy of the row's stored property bag, keyed by stored
   * property names (`@Column({ name })`), with values as the store returns them (strings, numbers,
   * booleans, `bigint`, `Date`, `Uint8Array`, `{ type: "Guid", value }`; `Json` columns are still
   * JSON text, and may be returned as text or as the value). Key fields stored as columns are there;
   * the PartitionKey and RowKey, ETag, Timestamp, `EntityType` and tablekit's own `_tk…` properties
   * are not (key fields missing afterwards are decoded from the keys). It runs on repository reads
   * (`get`, `find`, `scan`, `db.query(…)`); with `select`, only the selected properties are present.
   * Rows without a version in `EntityType` (`"Employee"`, written by other clients) and rows without
   * `EntityType` are not upcast. Index lookups return copies as they are.
   * @example
   * // v1 stored `name`; v2 splits it into firstName/lastName.
   * upcast: (row, from) => {
   *   if (from < 2) { const [firstName, lastName] = String(row.name).split(" "); return { ...row, firstName, lastName }; }
   *   return row;
   * }
   */
  upcast?:
    | ((properties: Record<string, unknown>, fromVersion: number) => Record<string, unknown>)
    | undefined;
  /**
   * A wide entity: more columns than one row holds (the service's 252 properties, 1 MiB), stored as
   * several rows of the same partition (RowKey + `" 00"`, `" 01"`, …), written in one entity group
   * transaction and read with one range query. Its RowKey may not contain a space; no indexes.
   */
  wide?: boolean | undefined;
  /**
   * Expiry (a TTL per entity): the field of a `DateTime` column holding when the entity expires
   * (absent on an entity: never). From that instant no read returns it and writes treat it as absent;
   * `db.sweepExpired(Entity)` (and the repair worker) delete it later, through an expiry index.
   * See docs/expiry.md.
   * @example
   * expiresAt: "validUntil"
   */
  expiresAt?: DateField<T> | undefined;
  /**
   * Records every committed write of the entity in a change feed, in the same entity group transaction
   * as the entity's row (read with `db.changes(Entity)`; see docs/change-feed.md). `true` keeps each
   * change 7 days; `{ retentionMs }` sets how long.
   */
  changeFeed?: boolean | ChangeFeedOptions | undefined;
}

/** Options of `@Entity({ changeFeed })`. */
export interface ChangeFeedOptions {
  /** How long a change (and a deleted entity's version) is kept, in milliseconds (default 7 days). */
  retentionMs?: number | undefined;
}
