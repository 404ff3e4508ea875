import { ConcurrencyError, EntityNotFoundError } from "../../errors.js";
import type { Query } from "../../query/query.js";
import type { BlindIndexing, Requests, TableNaming } from "../core/requests.js";
import { periodTablesOf } from "./context-tables.js";
import type { ReencryptResult } from "./reencrypt.js";
import type { Repository } from "./repository.js";

/**
 * The second half of `db.reencrypt` while a blind-index key is being rotated (the context has
 * `previousBlindIndexKeys`): every entity is written again through its repository (an update
 * conditional on the ETag it was read with), so its blind values and the keys of its index copies
 * are computed under the current blind-index key, and copies under an old key are removed as any
 * stale copy is. An entity changed or deleted meanwhile was written under the current key anyway:
 * it counts as skipped. Without a rotation under way, blind values are left as they are.
 */
export async function rewriteBlindValues<T extends object>(
  repository: Repository<T>,
  runner: Requests & TableNaming & BlindIndexing,
  result: ReencryptResult,
): Promise<ReencryptResult> {
  const model = repository.model;
  const rotating = (runner.blindIndex?.generations ?? 1) > 1;
  if (!rotating || !model.columns.some((column) => column.blindIndex !== undefined)) return result;
  const queries: Query<T>[] = [];
  if (model.tableTemplate === undefined) queries.push(repository.scan());
  else {
    // Each period's table on its own: the period of `end - 1 ms` is that table's.
    for (const { end } of await periodTablesOf(runner, model.ctor, "reencrypt"))
      queries.push(repository.period(new Date(end.getTime() - 1)).scan());
  }
  let rewritten = 0;
  let skipped = result.skipped;
  for (const query of queries) {
    for await (const entity of query) {
      try {
        await repository.update(entity);
        rewritten++;
      } catch (error) {
        if (!(error instanceof ConcurrencyError || error instanceof EntityNotFoundError)) throw error;
        skipped++;
      }
    }
  }
  return { ...result, skipped, blindRewritten: rewritten };
}
