import type { StoreContinuation, StorePage } from "../table-store.js";
import type { MemoryTable } from "./memory-table.js";
import type { PageRequest } from "./query-pager.js";
import { recordToStored, type StoredRecord } from "./typed-entity.js";

/**
 * Reads one page in an unspecified order, like the Cosmos DB Table API ("query results aren't sorted
 * in partition key/row key order", https://learn.microsoft.com/en-us/azure/cosmos-db/table/faq).
 * The order is a seeded shuffle of the matches: each entity ranks by a hash of the seed and its keys,
 * so the order is the same on every page of a query (continuations neither skip nor repeat an entity,
 * even when others come and go between pages) yet unrelated to key order; another seed, another order.
 */
export function readUnsortedPage(table: MemoryTable, request: PageRequest, seed: number): StorePage {
  const { filter, top, continuation, select, onScanned } = request;
  const matches: Ranked[] = [];
  for (const record of table.scan(filter.range.low, filter.range.high)) {
    onScanned();
    if (filter.predicate(record)) matches.push(ranked(seed, record.partitionKey, record.rowKey, record));
  }
  matches.sort(compareRanked);
  let start = 0;
  if (continuation !== undefined) {
    // The token names the next entity to return: resume at the first one not ranked before it.
    const at = ranked(seed, continuation.nextPartitionKey, continuation.nextRowKey ?? "", undefined);
    while (start < matches.length && compareRanked(matches[start] as Ranked, at) < 0) start++;
  }
  const end = Math.min(start + top, matches.length);
  const items: StorePage["items"] = [];
  for (let i = start; i < end; i++)
    items.push(recordToStored((matches[i] as Ranked).record as StoredRecord, select));
  const next = matches[end];
  return next === undefined ? { items } : { items, continuation: continueAt(next) };
}

/** An entity's place in the shuffled order (`record` absent for a continuation's position). */
interface Ranked {
  rank: number;
  partitionKey: string;
  rowKey: string;
  record: StoredRecord | undefined;
}

function ranked(
  seed: number,
  partitionKey: string,
  rowKey: string,
  record: StoredRecord | undefined,
): Ranked {
  return { rank: rankOf(seed, partitionKey, rowKey), partitionKey, rowKey, record };
}

function compareRanked(a: Ranked, b: Ranked): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  if (a.partitionKey !== b.partitionKey) return a.partitionKey < b.partitionKey ? -1 : 1;
  return a.rowKey < b.rowKey ? -1 : a.rowKey > b.rowKey ? 1 : 0;
}

function continueAt(next: Ranked): StoreContinuation {
  return { nextPartitionKey: next.partitionKey, nextRowKey: next.rowKey };
}

/** FNV-1a over the seed and the keys, then a final avalanche so neighbouring keys land far apart. */
function rankOf(seed: number, partitionKey: string, rowKey: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  const mix = (text: string) => {
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    h ^= 0xff;
    h = Math.imul(h, 0x01000193);
  };
  mix(partitionKey);
  mix(rowKey);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
