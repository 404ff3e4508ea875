import type { EdmValue } from "./edm-value.js";

/** The comparison operators of the service's OData filters. */
export type CompareOp = "eq" | "ne" | "gt" | "ge" | "lt" | "le";

/**
 * A parsed `$filter`. Comparisons are normalized to `property op literal` (a `literal op property`
 * comparison is flipped); `PartitionKey`, `RowKey` and `Timestamp` name the system properties.
 */
export type FilterNode =
  | { readonly kind: "and" | "or"; readonly left: FilterNode; readonly right: FilterNode }
  | { readonly kind: "not"; readonly operand: FilterNode }
  /** A bare `true` or `false`, as clients that build filters from predicates send (`false or …`). */
  | { readonly kind: "constant"; readonly value: boolean }
  | {
      readonly kind: "compare";
      readonly property: string;
      readonly op: CompareOp;
      readonly literal: EdmValue;
    };
