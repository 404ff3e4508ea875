import { ValidationError } from "../errors.js";
import type { EntityModel } from "../schema/entity-model.js";
import { formatColumnLiteral } from "./column-literal.js";
import { filterIdentifiers, isSelfContained } from "./filter-comparisons.js";

/** Comparison operators of `where`. */
export type ComparisonOperator = "eq" | "ne" | "gt" | "ge" | "lt" | "le";

const OPERATORS = new Set<ComparisonOperator>(["eq", "ne", "gt", "ge", "lt", "le"]);

/** The OData comparison of `where(field, op, value)` on one of the model's columns, or a `ValidationError`. */
export function compileComparison<T extends object>(
  model: EntityModel<T>,
  field: string,
  op: ComparisonOperator | undefined,
  value: unknown,
): string {
  const column = model.columnsByField.get(field);
  if (!column) {
    throw new ValidationError("unknown-field", `${model.name} has no column '${field}'`, { field });
  }
  if (column.series !== undefined) {
    // The service compares single properties; a series is one property per slot.
    throw new ValidationError(
      "series-filter",
      `${model.name}.${field} is a data series (${column.series} properties, one per slot): where() cannot compare it; filter a slot with filter(odata\`${column.properties[0]} eq …\`)`,
      { field },
    );
  }
  if (column.encrypted) throw encryptedFilter(model.name, field);
  if (column.large) {
    // The row holds only a reference to the blob: the service cannot compare the value.
    throw new ValidationError(
      "large-filter",
      `${model.name}.${field} is a large column (kept in a blob): it cannot be filtered on`,
      { field },
    );
  }
  if (op === undefined || !OPERATORS.has(op)) {
    throw new ValidationError("operator", `Unknown operator '${String(op)}' (use eq, ne, gt, ge, lt or le)`, {
      field,
    });
  }
  if (value === undefined || value === null) {
    throw new ValidationError("filter-value", `${field}: the service cannot compare with ${String(value)}`, {
      field,
    });
  }
  return `${column.property} ${op} ${formatColumnLiteral(column, value)}`;
}

/** Checks a raw filter of `filter(expression)`: one self-contained expression naming no encrypted column. */
export function checkFilterExpression<T extends object>(model: EntityModel<T>, expression: string): void {
  if (typeof expression !== "string" || expression.trim() === "") {
    throw new ValidationError("filter", "filter() needs a non-empty OData expression");
  }
  if (!isSelfContained(expression)) {
    throw new ValidationError(
      "filter",
      "filter() needs one self-contained expression (closed quotes, balanced parentheses); build it with the odata template",
    );
  }
  for (const name of filterIdentifiers(expression)) {
    const column = model.columns.find((c) => c.encrypted && c.property === name);
    if (column) throw encryptedFilter(model.name, column.field);
  }
}

/** The service filters rows, and a wide entity's columns are spread over several rows. */
export function assertRowFilterable<T extends object>(model: EntityModel<T>, what: string): void {
  if (!model.wide) return;
  throw new ValidationError(
    "wide-filter",
    `${model.name} is a wide entity: ${what} is not supported, since the service filters single rows and each of its columns lives in only one of the entity's rows; narrow with find, between or startsWith on the keys and filter the results`,
  );
}

/** The service stores an encrypted column as ciphertext: a comparison with it could never match. */
function encryptedFilter(entity: string, field: string): ValidationError {
  return new ValidationError(
    "encrypted-filter",
    `${entity}.${field} is encrypted: the service holds only ciphertext, so it cannot be filtered on; filter after reading, or keep a non-secret column to query by`,
    { field },
  );
}
