import type { ColumnType } from "../wire/column-type.js";

/** What the mapper needs of one column (the schema's resolved column model satisfies it). */
export interface MappedColumn {
  /** The class field. */
  readonly field: string;
  /** The property name stored in the table. */
  readonly property: string;
  readonly type: ColumnType;
  /** For Json columns: the class values are rebuilt as. */
  readonly jsonClass?: new () => object;
  /** A large column: kept in a blob, outside the row; the mapper leaves it to the repository. */
  readonly large?: boolean;
}
