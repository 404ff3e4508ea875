/**
 * The one partition an OData filter confines a query to, if it does: a top-level conjunct
 * `PartitionKey eq '…'` and no top-level `or`. Such a query goes to one shard; any other reads every
 * shard. Deciding conservatively is always correct: a fan-out returns the same rows, only dearer.
 */
export function singlePartitionOf(filter: string | undefined): string | undefined {
  if (filter === undefined) return undefined;
  const conjuncts = topLevelConjuncts(filter.trim());
  if (conjuncts === undefined) return undefined;
  for (const conjunct of conjuncts) {
    const key = /^PartitionKey eq '((?:[^']|'')*)'$/.exec(unwrap(conjunct))?.[1];
    if (key !== undefined) return key.replaceAll("''", "'");
  }
  return undefined;
}

/**
 * The top-level `PartitionKey` comparisons of a filter, joined by `and` (`undefined` when there are
 * none, or a top-level `or`): the partitions the filter can match, whatever else it asks.
 */
export function partitionRangeOf(filter: string | undefined): string | undefined {
  if (filter === undefined) return undefined;
  const conjuncts = topLevelConjuncts(filter.trim());
  const range = conjuncts
    ?.map(unwrap)
    .filter((conjunct) => /^PartitionKey (?:eq|ne|gt|ge|lt|le) '(?:[^']|'')*'$/.test(conjunct));
  return range === undefined || range.length === 0 ? undefined : range.join(" and ");
}

/** A string literal's body in OData (a quote doubled). */
export function escapeODataString(value: string): string {
  return value.replaceAll("'", "''");
}

/** The filter split at its top-level ` and `s; `undefined` when it has a top-level ` or `. */
function topLevelConjuncts(filter: string): string[] | undefined {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < filter.length; i++) {
    const c = filter[i];
    if (c === "'") quoted = !quoted;
    if (quoted) continue;
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (depth === 0 && c === " ") {
      const word = /^ (and|or) /i.exec(filter.slice(i, i + 5))?.[1]?.toLowerCase();
      if (word === "or") return undefined;
      if (word === "and") {
        parts.push(filter.slice(start, i));
        start = i + 5;
        i += 4;
      }
    }
  }
  parts.push(filter.slice(start));
  return parts;
}

/** The text inside redundant outer parentheses. */
function unwrap(text: string): string {
  let t = text.trim();
  while (t.startsWith("(") && t.endsWith(")") && closesAtEnd(t)) t = t.slice(1, -1).trim();
  return t;
}

function closesAtEnd(text: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") quoted = !quoted;
    if (quoted) continue;
    if (c === "(") depth++;
    else if (c === ")" && --depth === 0 && i < text.length - 1) return false;
  }
  return true;
}
