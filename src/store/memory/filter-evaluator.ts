import type { EntityRecord } from "../served-store.js";
import { compareEdm } from "./edm-compare.js";
import type { EdmValue } from "./edm-value.js";
import type { CompareOp, FilterNode } from "./filter-ast.js";
import { StoredRecord } from "./typed-entity.js";

/** A compiled filter: true when the entity matches. */
export type Predicate = (record: EntityRecord) => boolean;

/** Whether a comparison outcome (see compareEdm) satisfies the operator; NaN satisfies only `ne`. */
const OUTCOME: Record<CompareOp, (c: number) => boolean> = {
  eq: (c) => c === 0,
  ne: (c) => c !== 0,
  gt: (c) => c > 0,
  ge: (c) => c >= 0,
  lt: (c) => c < 0,
  le: (c) => c <= 0,
};

const NEVER: Predicate = () => false;
const ALWAYS: Predicate = () => true;

/**
 * Compiles a filter AST into a closure. The service's rules: a comparison against a property the
 * entity does not have is false (also `ne`), and so is one whose constant has an incomparable type;
 * `not` simply negates its operand's outcome.
 */
export function compilePredicate(node: FilterNode): Predicate {
  switch (node.kind) {
    case "and": {
      const left = compilePredicate(node.left);
      const right = compilePredicate(node.right);
      return (r) => left(r) && right(r);
    }
    case "or": {
      const left = compilePredicate(node.left);
      const right = compilePredicate(node.right);
      return (r) => left(r) || right(r);
    }
    case "not": {
      const operand = compilePredicate(node.operand);
      return (r) => !operand(r);
    }
    case "constant":
      return node.value ? ALWAYS : NEVER;
    case "compare":
      return compileComparison(node.property, node.op, node.literal);
  }
}

function compileComparison(property: string, op: CompareOp, literal: EdmValue): Predicate {
  const holds = OUTCOME[op];
  switch (property) {
    case "PartitionKey":
    case "RowKey": {
      if (literal.type !== "String") return NEVER;
      const text = literal.value;
      return property === "PartitionKey"
        ? (r) => holds(compareStrings(r.partitionKey, text))
        : (r) => holds(compareStrings(r.rowKey, text));
    }
    case "Timestamp": {
      if (literal.type !== "DateTime") return NEVER;
      const ticks = literal.value;
      return (r) => holds(r.timestamp < ticks ? -1 : r.timestamp > ticks ? 1 : 0);
    }
    default:
      return (r) => {
        const value = r instanceof StoredRecord ? r.property(property) : r.properties.get(property);
        if (value === undefined) return false;
        const c = compareEdm(value, literal);
        return c !== undefined && holds(c);
      };
  }
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
