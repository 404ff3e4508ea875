import { ValidationError } from "../errors.js";
import type { KeyTemplate } from "../keys/key-template.js";

/** The first `{field:format}` placeholder of a template and the literal before it. */
const FIRST_PLACEHOLDER = /^([^{]*)\{([^}:]+)(?::([^}]*))?\}/;
/** Descending formats: `{at:desc}` (inverted ticks), `{n:desc}`, `{n:6:desc}` (inverted integers). */
const DESCENDING = /^(?:[0-9]+:)?desc$/;

/**
 * Checks that a RowKey template is a log tail: its first placeholder sorts newest (or largest)
 * first, so the head of the partition's range holds the latest entities and `$top=n` fetches them.
 * A constant literal before it (`exp_{at:desc}_{id}`) is fine: every key of the entity shares it.
 */
export function assertLogTail(name: string, rowKey: KeyTemplate): void {
  const match = FIRST_PLACEHOLDER.exec(rowKey.source);
  if (match && DESCENDING.test(match[3] ?? "")) return;
  const first = match ? `{${match[2]}${match[3] === undefined ? "" : `:${match[3]}`}}` : "no placeholder";
  throw new ValidationError(
    "log-tail",
    `${name}: latest() needs a RowKey that starts with a descending placeholder (the log-tail pattern), ` +
      `but '${rowKey.source}' starts with ${first}. Use e.g. rowKey: "{at:desc}_{id}" (inverted ticks, newest first) ` +
      `or "{seq:10:desc}", with a tie-breaker field after it so entities written in the same millisecond stay distinct; ` +
      "otherwise use find(...).take(n), which returns the first n in key order",
    { field: "rowKey" },
  );
}
