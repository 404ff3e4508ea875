import type { ColumnType } from "../wire/column-type.js";

/** What the mapper needs of one column (the schema's resolved column model satisfies it). */
export interface MappedColumn {
  /** The class field. */
  readonly field: string;
  /** The property name stored in the table (for a series: the prefix of its slots' names). */
  readonly property: string;
  /** Every property name the column is stored under: `[property]`, or a series' slot names in order. */
  readonly properties: readonly string[];
  /** For a data series: its number of slots (the field is an array of that length). */
  readonly series?: number;
  readonly type: ColumnType;
  /** For Json columns: the class values are rebuilt as. */
  readonly jsonClass?: new () => object;
  /** Encrypted client-side: errors about its values must not show them. */
  readonly encrypted?: true;
  /** A large column: kept in a blob, outside the row; the mapper leaves it to the repository. */
  readonly large?: boolean;
}
