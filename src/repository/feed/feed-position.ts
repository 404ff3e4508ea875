import { ValidationError } from "../../errors.js";

/** Per partition (`<physical table>:<PartitionKey>`), the sequence number of the last change read. */
export type FeedCursors = Map<string, number>;

const VERSION = "f1.";

/**
 * A position as opaque text: the cursors of every partition read so far, sorted, as base64url JSON.
 * A partition the position does not name is read from its oldest retained change.
 */
export function encodePosition(cursors: FeedCursors): string {
  const sorted = [...cursors.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return VERSION + Buffer.from(JSON.stringify(sorted), "utf8").toString("base64url");
}

/** A partition's name in a position's cursors: `<physical table>:<PartitionKey>`. */
export function partitionId(partition: { table: string; partitionKey: string }): string {
  return `${partition.table}:${partition.partitionKey}`;
}

/**
 * The position text of cursors that move on change by change (`change.position` after each): the
 * cursors are sorted once, not re-sorted for every change.
 */
export class PositionText {
  readonly #cursors: FeedCursors;
  #sorted: Array<[string, number]> | undefined;

  /** Moves `cursors` as it is set. */
  constructor(cursors: FeedCursors) {
    this.#cursors = cursors;
  }

  set(partition: string, seq: number): void {
    if (!this.#cursors.has(partition)) this.#sorted = undefined;
    this.#cursors.set(partition, seq);
    const entry = this.#sorted?.find(([name]) => name === partition);
    if (entry) entry[1] = seq;
  }

  /** The position of the cursors now (as `encodePosition`). */
  text(): string {
    this.#sorted ??= [...this.#cursors.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return VERSION + Buffer.from(JSON.stringify(this.#sorted), "utf8").toString("base64url");
  }
}

/** The cursors of a position from `encodePosition`; a `ValidationError` for any other text. */
export function decodePosition(position: string): FeedCursors {
  const invalid = () =>
    new ValidationError(
      "feed-position",
      "from is not a change feed position (use a `next` or `change.position`)",
    );
  if (typeof position !== "string" || !position.startsWith(VERSION)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(position.slice(VERSION.length), "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed)) throw invalid();
  const cursors: FeedCursors = new Map();
  for (const entry of parsed) {
    if (
      !Array.isArray(entry) ||
      typeof entry[0] !== "string" ||
      !Number.isSafeInteger(entry[1]) ||
      entry[1] < 0
    )
      throw invalid();
    cursors.set(entry[0], entry[1]);
  }
  return cursors;
}
