import { ValidationError } from "../errors.js";
import { ServiceLimits } from "../util/service-limits.js";

const COMPARISON = /^(eq|ne|gt|ge|lt|le)$/;

/**
 * Checks that a raw filter is one self-contained expression: quotes closed and parentheses
 * balanced, never closing more than it opened, so `x eq 1) or (y eq 2` cannot escape the
 * conjunct it is placed in.
 */
export function isSelfContained(filter: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < filter.length; i++) {
    const ch = filter[i];
    if (quoted) {
      if (ch === "'") {
        if (filter[i + 1] === "'") i++;
        else quoted = false;
      }
    } else if (ch === "'") quoted = true;
    else if (ch === "(") depth++;
    else if (ch === ")" && --depth < 0) return false;
  }
  return !quoted && depth === 0;
}

/** Counts the comparison operators in a filter, ignoring quoted literals (the service allows at most 15). */
export function countComparisons(filter: string): number {
  let count = 0;
  for (const word of unquotedWords(filter)) if (COMPARISON.test(word)) count++;
  return count;
}

/** The identifiers of a filter outside quoted literals (property names, operators, keywords). */
export function filterIdentifiers(filter: string): Set<string> {
  return new Set(unquotedWords(filter));
}

/** The words (runs of letters, digits and _) of a filter outside quoted literals, in order. */
function* unquotedWords(filter: string): Generator<string> {
  let word = "";
  let quoted = false;
  for (let i = 0; i <= filter.length; i++) {
    const ch = filter[i] ?? " ";
    if (quoted) {
      if (ch === "'") {
        if (filter[i + 1] === "'") i++;
        else quoted = false;
      }
      continue;
    }
    if (/[A-Za-z0-9_]/.test(ch)) {
      word += ch;
      continue;
    }
    if (word !== "") yield word;
    word = "";
    // A typed literal's prefix (datetime'…', X'…') is a word too; its quote opens the literal.
    if (ch === "'") quoted = true;
  }
}

/** Refuses, before any request, a filter with more comparisons than the service allows in one query. */
export function assertComparisonLimit(filter: string): void {
  const comparisons = countComparisons(filter);
  if (comparisons > ServiceLimits.maxFilterComparisons) {
    throw new ValidationError(
      "filter-comparisons",
      `The query has ${comparisons} comparisons; the service allows at most ${ServiceLimits.maxFilterComparisons}`,
    );
  }
}
