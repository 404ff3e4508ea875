import { ServiceLimits } from "../../util/service-limits.js";
import type { CompareOp, FilterNode } from "./filter-ast.js";
import { syntaxError, type Token, tokenize } from "./odata-lexer.js";

const COMPARE_OPS: ReadonlySet<string> = new Set(["eq", "ne", "gt", "ge", "lt", "le"]);
const KEYWORDS: ReadonlySet<string> = new Set([...COMPARE_OPS, "and", "or", "not", "true", "false", "null"]);
const FLIPPED: Record<CompareOp, CompareOp> = { eq: "eq", ne: "ne", gt: "lt", ge: "le", lt: "gt", le: "ge" };

type Operand = { kind: "property"; name: string } | { kind: "literal"; token: Token & { kind: "literal" } };

/**
 * Parses the service's OData `$filter` subset into an AST:
 * `or` < `and` < `not` < comparison in precedence, parentheses, comparisons of one property with one
 * constant, bare `true`/`false` (in any case), other keywords in lower case (the service is case-sensitive). At most 15 comparisons.
 * Any violation is a 400 InvalidInput `StoreError` that says where and why.
 */
export function parseFilter(text: string): FilterNode {
  const parser = new Parser(text, tokenize(text));
  const node = parser.parseFilter();
  const comparisons = countComparisons(node);
  if (comparisons > ServiceLimits.maxFilterComparisons) {
    throw syntaxError(
      text,
      0,
      `the filter has ${comparisons} comparisons; the service allows at most ${ServiceLimits.maxFilterComparisons}`,
    );
  }
  return node;
}

function countComparisons(node: FilterNode): number {
  switch (node.kind) {
    case "compare":
      return 1;
    case "constant":
      return 0;
    case "not":
      return countComparisons(node.operand);
    default:
      return countComparisons(node.left) + countComparisons(node.right);
  }
}

class Parser {
  readonly #text: string;
  readonly #tokens: Token[];
  #index = 0;

  constructor(text: string, tokens: Token[]) {
    this.#text = text;
    this.#tokens = tokens;
  }

  parseFilter(): FilterNode {
    if (this.#peek().kind === "end") throw this.#error(this.#peek(), "the filter is empty");
    const node = this.#parseOr();
    const next = this.#peek();
    if (next.kind !== "end")
      throw this.#error(next, `expected 'and', 'or' or the end, found ${describe(next)}`);
    return node;
  }

  #parseOr(): FilterNode {
    let left = this.#parseAnd();
    while (this.#isWord("or")) {
      this.#index++;
      left = { kind: "or", left, right: this.#parseAnd() };
    }
    return left;
  }

  #parseAnd(): FilterNode {
    let left = this.#parseUnary();
    while (this.#isWord("and")) {
      this.#index++;
      left = { kind: "and", left, right: this.#parseUnary() };
    }
    return left;
  }

  #parseUnary(): FilterNode {
    if (this.#isWord("not")) {
      this.#index++;
      return { kind: "not", operand: this.#parseUnary() };
    }
    const token = this.#peek();
    if (token.kind === "(") {
      this.#index++;
      const inner = this.#parseOr();
      const close = this.#peek();
      if (close.kind !== ")") throw this.#error(close, `expected ')', found ${describe(close)}`);
      this.#index++;
      return inner;
    }
    return this.#parseComparison();
  }

  #parseComparison(): FilterNode {
    const left = this.#parseOperand();
    const opToken = this.#peek();
    // A Boolean constant not followed by an operator is an expression of its own (`$filter=false`,
    // `(true and RowKey eq '1')`), which the service accepts as .NET predicate builders send it.
    if (
      left.kind === "literal" &&
      left.token.value.type === "Boolean" &&
      !(opToken.kind === "word" && COMPARE_OPS.has(opToken.text))
    ) {
      return { kind: "constant", value: left.token.value.value };
    }
    if (opToken.kind !== "word" || !COMPARE_OPS.has(opToken.text)) {
      const hint =
        opToken.kind === "word" && COMPARE_OPS.has(opToken.text.toLowerCase())
          ? " (operators are lower-case)"
          : left.kind === "property"
            ? " (a property must be compared with a constant, e.g. Active eq true)"
            : "";
      throw this.#error(
        opToken,
        `expected a comparison operator (eq, ne, gt, ge, lt, le), found ${describe(opToken)}${hint}`,
      );
    }
    this.#index++;
    const op = opToken.text as CompareOp;
    const right = this.#parseOperand();
    if (left.kind === "property" && right.kind === "literal") {
      return { kind: "compare", property: left.name, op, literal: right.token.value };
    }
    if (left.kind === "literal" && right.kind === "property") {
      return { kind: "compare", property: right.name, op: FLIPPED[op], literal: left.token.value };
    }
    throw this.#error(
      opToken,
      "a comparison needs one property and one constant (the service compares properties only with constants)",
    );
  }

  #parseOperand(): Operand {
    const token = this.#peek();
    if (token.kind === "literal") {
      this.#index++;
      return { kind: "literal", token };
    }
    if (token.kind === "word") {
      // Boolean literals in any case (`True`, `FALSE`): the OData v3 ABNF's literals are
      // case-insensitive (RFC 5234 strings), and Azure accepts them (Azurite #1947, "for Azure parity").
      const word = token.text.toLowerCase();
      if (word === "true" || word === "false") {
        this.#index++;
        const value = word === "true";
        return {
          kind: "literal",
          token: { kind: "literal", value: { type: "Boolean", value }, text: token.text, pos: token.pos },
        };
      }
      if (token.text === "null")
        throw this.#error(token, "comparisons with null are not supported by the service");
      if (!KEYWORDS.has(token.text)) {
        this.#index++;
        return { kind: "property", name: token.text };
      }
    }
    throw this.#error(token, `expected a property name or a constant, found ${describe(token)}`);
  }

  #peek(): Token {
    return this.#tokens[this.#index]!;
  }

  #isWord(text: string): boolean {
    const token = this.#peek();
    return token.kind === "word" && token.text === text;
  }

  #error(token: Token, detail: string) {
    return syntaxError(this.#text, token.pos, detail);
  }
}

function describe(token: Token): string {
  switch (token.kind) {
    case "end":
      return "the end of the filter";
    case "word":
    case "literal":
      return `'${token.text}'`;
    default:
      return `'${token.kind}'`;
  }
}
