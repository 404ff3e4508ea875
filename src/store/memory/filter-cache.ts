import { compilePredicate, type Predicate } from "./filter-evaluator.js";
import { type KeyRange, keyRangeOf } from "./key-range.js";
import { parseFilter } from "./odata-filter-parser.js";

/** A filter ready to run: its predicate and the index range that can hold matches. */
export interface CompiledFilter {
  readonly predicate: Predicate;
  readonly range: KeyRange;
}

const MATCH_ALL: CompiledFilter = { predicate: () => true, range: {} };

/**
 * Parses and compiles each distinct filter text once (queries are the hot path and the same texts
 * recur, page after page). Least recently used entries are evicted beyond `capacity`.
 */
export class FilterCache {
  readonly #capacity: number;
  readonly #entries = new Map<string, CompiledFilter>();
  #compilations = 0;

  constructor(capacity = 500) {
    this.#capacity = capacity;
  }

  /** How many filter texts were parsed so far (cache misses). */
  get compilations(): number {
    return this.#compilations;
  }

  /** The compiled form of a filter; absent or blank text matches everything. */
  get(text: string | undefined): CompiledFilter {
    if (text === undefined || text.trim() === "") return MATCH_ALL;
    const hit = this.#entries.get(text);
    if (hit !== undefined) {
      // Map keeps insertion order: re-inserting marks the entry most recently used.
      this.#entries.delete(text);
      this.#entries.set(text, hit);
      return hit;
    }
    const ast = parseFilter(text); // throws 400 InvalidInput; failures are not cached
    this.#compilations++;
    const compiled: CompiledFilter = { predicate: compilePredicate(ast), range: keyRangeOf(ast) };
    this.#entries.set(text, compiled);
    if (this.#entries.size > this.#capacity) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
    return compiled;
  }
}
