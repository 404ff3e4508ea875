import type { ColumnType } from "./column-type.js";

/** Options of `@Column`. */
export interface ColumnOptions {
  /** The stored type; inferred from `design:type` metadata when omitted (tsc only, not tsx/esbuild). */
  type?: ColumnType;
  /** The property name stored in the table (default: the field name). */
  name?: string;
}

/** Options of one secondary index (see the indexes issue); validated at definition time. */
export interface IndexOptions {
  /** Another table for the copies (default: the entity's table). */
  table?: string;
  /** Key template of the copies' PartitionKey (default: the entity's). */
  partitionKey?: string;
  /** Key template of the copies' RowKey. */
  rowKey: string;
  /** Fields the copy carries (default: all). Key fields of the entity are always carried. */
  project?: readonly string[];
  /** A sparse index: only entities for which this returns true get a copy. */
  when?: (entity: never) => boolean;
  /** Unique (default) or not. */
  unique?: boolean;
}

/** Options of `@Entity`. */
export interface EntityOptions {
  /** The table name (Azure rules: 3-63 letters and digits, starting with a letter). */
  table: string;
  /** Key template of the PartitionKey, e.g. `"{department}"`. */
  partitionKey: string;
  /** Key template of the RowKey, e.g. `"empid_{employeeId:6}"`. */
  rowKey: string;
  /** Secondary indexes by name. */
  indexes?: Record<string, IndexOptions>;
  /** The discriminator stored in every row (default: the class name; set it where a bundler minifies names). */
  type?: string;
  /** Schema version stored with the discriminator (default 1). */
  version?: number;
}
