import type { ColumnOptions } from "./entity-options.js";

/** What `@Column` recorded for one field: its plain arguments plus the `design:type` seen, if any. */
export interface ColumnRecord {
  field: string;
  options: ColumnOptions;
  designType: unknown;
}
