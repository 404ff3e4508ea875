/**
 * The PartitionKey a query filter is confined to, when its top-level `and` chain starts with
 * `PartitionKey eq '…'` (the form every partition query of tablekit's planner takes); `undefined` for a
 * filter that may reach several partitions, such as one with an `or` outside parentheses (`and` binds
 * tighter than `or` in OData, so `PartitionKey eq 'a' and X or Y` is not confined to 'a').
 */
export function pinnedPartition(filter: string | undefined): string | undefined {
  if (filter === undefined) return undefined;
  const match = /^PartitionKey eq '((?:[^']|'')*)'/.exec(filter);
  if (!match) return undefined;
  const rest = filter.slice(match[0].length);
  if (rest !== "" && (!rest.startsWith(" and ") || hasTopLevelOr(rest))) return undefined;
  return (match[1] as string).replaceAll("''", "'");
}

/** Whether `or` appears outside string literals and parentheses. */
function hasTopLevelOr(text: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    // A doubled quote inside a literal toggles twice, so it stays inside.
    if (char === "'") quoted = !quoted;
    else if (quoted) continue;
    else if (char === "(") depth++;
    else if (char === ")") depth--;
    else if (depth === 0 && text.startsWith(" or", at) && /[ (]/.test(text[at + 3] ?? "")) return true;
  }
  return false;
}
