import type { ColumnOptions } from "./entity-options.js";

/** The decorator dialect a class was compiled with: TypeScript's `experimentalDecorators` or standard. */
export type DecoratorDialect = "legacy" | "standard";

/** What `@Column` recorded for one field: its plain arguments plus the `design:type` seen, if any. */
export interface ColumnRecord {
  field: string;
  options: ColumnOptions;
  designType: unknown;
  dialect: DecoratorDialect;
}
