const COMPARISON = /^(eq|ne|gt|ge|lt|le)$/;

/** Counts the comparison operators in a filter, ignoring quoted literals (the service allows at most 15). */
export function countComparisons(filter: string): number {
  let count = 0;
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
    if (ch === "'") {
      quoted = true;
      word = "";
      continue;
    }
    if (/[A-Za-z]/.test(ch)) {
      word += ch;
    } else {
      if (COMPARISON.test(word)) count++;
      word = "";
    }
  }
  return count;
}
