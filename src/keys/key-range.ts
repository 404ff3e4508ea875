/** A contiguous range of keys: `ge <= key < lt`, unbounded above when `lt` is absent. */
export interface KeyRange {
  ge: string;
  lt?: string;
}

/**
 * The smallest string greater than every string that starts with `prefix`, or `undefined` when none
 * exists (empty prefix, or only U+FFFF units): the last UTF-16 unit plus one, after dropping trailing U+FFFF.
 */
export function successor(prefix: string): string | undefined {
  let end = prefix.length;
  while (end > 0 && prefix.charCodeAt(end - 1) === 0xffff) end--;
  if (end === 0) return undefined;
  return prefix.slice(0, end - 1) + String.fromCharCode(prefix.charCodeAt(end - 1) + 1);
}

/** The range of every key that starts with `prefix`. */
export function prefixKeyRange(prefix: string): KeyRange {
  const lt = successor(prefix);
  return lt === undefined ? { ge: prefix } : { ge: prefix, lt };
}

/**
 * The smallest range holding every key that starts with `from` or with `to`, running from `from` to `to`
 * in key order (either direction, so descending formats work).
 * When one prefix extends the other the bounds nest and key order cannot tell the direction: it then runs
 * from the first key of `from` to the last key of `to`, so `{}` as either bound leaves that end open.
 */
export function betweenKeyRange(from: string, to: string): KeyRange {
  const nested = from.startsWith(to) || to.startsWith(from);
  if (nested || from <= to) return withUpper(from, successor(to));
  return withUpper(to, successor(from));
}

function withUpper(ge: string, lt: string | undefined): KeyRange {
  return lt === undefined ? { ge } : { ge, lt };
}
