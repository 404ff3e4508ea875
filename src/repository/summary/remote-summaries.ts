import { createHash } from "node:crypto";
import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  StoreError,
  ValidationError,
} from "../../errors.js";
import { prefixKeyRange } from "../../keys/key-range.js";
import { quoteString } from "../../query/odata.js";
import type { EntityModel, RemoteSummaryModel, SummaryModel } from "../../schema/entity-model.js";
import type { StoreContinuation, StoredEntity, TableStore, WireEntity } from "../../store/table-store.js";
import { ServiceLimits } from "../../util/service-limits.js";
import { SUMMARY_PROPERTY } from "../../wire/system-properties.js";
import type { Backoff, Requests, Scoped, TableNaming } from "../core/requests.js";
import { SummaryCache, summaryCacheKey } from "./summary-cache.js";
import {
  addTotals,
  contributionRow,
  readSummaryState,
  SOURCE_PROPERTY,
  type SummaryState,
  type SummaryTotals,
  summaryMarker,
  zeroTotals,
} from "./summary-row.js";

/** Rounds of a contribution write before giving up (each lost round means another writer mirrored meanwhile). */
const MAX_ROUNDS = 50;

/** A summary kept in another partition (`SummaryModel.remote` set). */
export type RemoteSummary = SummaryModel & { remote: RemoteSummaryModel };

/** The entity's summaries kept in another partition. */
export function remoteSummariesOf(model: EntityModel): RemoteSummary[] {
  return [...model.summaries.values()].filter((s): s is RemoteSummary => s.remote !== undefined);
}

/**
 * A remote summary's source: the partition whose local row one contribution row mirrors, by its
 * PartitionKey. For an entity with a table per period, partitions of different periods share
 * PartitionKeys, so the source names the period's table too: `<period table>~<PartitionKey>` (the
 * logical name, without the context's prefix; a table name holds no `~`). `table` is the physical one.
 */
export function summarySource(
  model: EntityModel,
  runner: TableNaming,
  table: string,
  partitionKey: string,
): string {
  if (model.tableTemplate === undefined) return partitionKey;
  return `${table.slice(runner.tableName("").length)}~${partitionKey}`;
}

/** What `summarySource` names: the source's PartitionKey and, for a table per period, its physical table. */
export function sourceOf(
  model: EntityModel,
  runner: TableNaming,
  source: string,
): { table: string; partitionKey: string } {
  if (model.tableTemplate === undefined)
    return { table: runner.tableName(model.table), partitionKey: source };
  const at = source.indexOf("~");
  return { table: runner.tableName(source.slice(0, at)), partitionKey: source.slice(at + 1) };
}

/**
 * The remote PartitionKey a source (see `summarySource`) adds to: the template's fields are fields of the
 * entity's PartitionKey (checked by the schema), decoded from it, so every entity of a partition (and
 * a delete given only its key) maps to the same one. A value it cannot encode is a `ValidationError`.
 */
export function remotePartitionOf(model: EntityModel, summary: RemoteSummary, source: string): string {
  const template = summary.remote.partitionKey;
  if (template.fields.length === 0) return template.encode({}, "PartitionKey");
  const sourcePartitionKey =
    model.tableTemplate === undefined ? source : source.slice(source.indexOf("~") + 1);
  const values = model.partitionKey.decode(sourcePartitionKey);
  if (values === undefined) {
    throw new ValidationError(
      "summary-partition",
      `${model.name}.summaries.${summary.name}: PartitionKey '${sourcePartitionKey}' does not match '${model.partitionKey.source}'`,
      { field: "PartitionKey" },
    );
  }
  return template.encode(values, "PartitionKey");
}

/**
 * The contribution row of one source partition: `<rowKey>~<source>` (see `summarySource`), or its SHA-256 after
 * `~~` where the key would pass the service's 1 KiB limit (the source is also stored in the row).
 */
export function contributionRowKey(summary: RemoteSummary, sourcePartitionKey: string): string {
  const plain = `${summary.remote.rowKey}~${sourcePartitionKey}`;
  if (plain.length * 2 <= ServiceLimits.maxKeyBytes && !sourcePartitionKey.startsWith("~")) return plain;
  const hash = createHash("sha256").update(sourcePartitionKey).digest("base64url");
  return `${summary.remote.rowKey}~~${hash}`;
}

/** The state of a source partition's local row a mirror copies: its totals at its write count. */
export interface LocalTotals {
  totals: SummaryTotals;
  sequence: bigint;
}

/**
 * Mirrors a remote summary's exact local rows into its remote partition (one contribution row per
 * source partition) and reads them back. A contribution is written only if the local version it
 * carries is newer than the stored one (a conditional read-modify-write on its ETag), so replays,
 * retried lost answers and racing writers never move it backwards; the values are absolute, so
 * applying one twice is the same as once.
 */
export class RemoteSummaries {
  readonly #model: EntityModel;
  readonly #runner: Requests & TableNaming & Backoff;
  readonly #cache: SummaryCache;

  constructor(model: EntityModel, runner: Requests & TableNaming & Scoped & Backoff) {
    this.#model = model;
    this.#runner = runner;
    this.#cache = SummaryCache.of(runner.scope);
  }

  /** The physical table of a remote summary (with the context's prefix). */
  tableOf(summary: RemoteSummary): string {
    return this.#runner.tableName(summary.remote.table);
  }

  /**
   * Writes the contribution of `source` (see `summarySource`) at version `local.sequence` unless one as new is
   * stored; resolves whether it wrote. With `force`, also rewrites a contribution of the same version
   * whose values differ (repair of a tampered row).
   */
  async mirror(summary: RemoteSummary, source: string, local: LocalTotals, force = false): Promise<boolean> {
    const table = this.tableOf(summary);
    const partitionKey = remotePartitionOf(this.#model, summary, source);
    const rowKey = contributionRowKey(summary, source);
    const key = summaryCacheKey(table, partitionKey, rowKey, summaryMarker(this.#model, summary));
    const row = contributionRow(
      this.#model,
      summary,
      { partitionKey, rowKey, source: source },
      local.totals,
      local.sequence,
    );
    for (let round = 1; ; round++) {
      const cached = round === 1 && !force ? this.#cache.get(key) : undefined;
      const state = cached ?? (await this.#read(summary, table, partitionKey, rowKey));
      const newer = state.sequence < local.sequence;
      const differs = force && state.sequence === local.sequence && !sameExactly(state.totals, local.totals);
      if (!newer && !differs) return false;
      try {
        const { etag } = await this.#write(table, row, state.etag);
        this.#cache.remember(key, { etag, totals: local.totals, sequence: local.sequence, recent: [] });
        return true;
      } catch (error) {
        // Another mirror got there first (or our own attempt whose answer was lost): read and compare again.
        const race =
          error instanceof ConcurrencyError ||
          error instanceof EntityAlreadyExistsError ||
          error instanceof EntityNotFoundError;
        this.#cache.forget(key);
        if (!race || round >= MAX_ROUNDS) throw error;
        await this.#runner.retry.contend(round);
      }
    }
  }

  /** The sum of every contribution in the remote partition (zeros when there is none). */
  async totals(summary: RemoteSummary, partitionKey: string): Promise<SummaryTotals> {
    let totals = zeroTotals(summary);
    for (const state of (await this.contributions(summary, partitionKey)).values())
      totals = addTotals(totals, state.totals, 1);
    return totals;
  }

  /** The contribution rows of a remote partition by source PartitionKey (one range query; empty without the table). */
  async contributions(summary: RemoteSummary, partitionKey: string): Promise<Map<string, SummaryState>> {
    const table = this.tableOf(summary);
    const range = prefixKeyRange(`${summary.remote.rowKey}~`);
    const filter =
      `PartitionKey eq ${quoteString(partitionKey)} and RowKey ge ${quoteString(range.ge)}` +
      (range.lt === undefined ? "" : ` and RowKey lt ${quoteString(range.lt)}`);
    const marker = summaryMarker(this.#model, summary);
    const found = new Map<string, SummaryState>();
    for await (const row of remoteTableRows(this.#runner, "query", table, filter)) {
      // Another type's summary under the same RowKey prefix is not ours to add.
      if (row[SUMMARY_PROPERTY] !== marker) continue;
      found.set(String(row[SOURCE_PROPERTY]), readSummaryState(this.#model, summary, row));
    }
    return found;
  }

  async #read(
    summary: SummaryModel,
    table: string,
    partitionKey: string,
    rowKey: string,
  ): Promise<SummaryState> {
    let row: Awaited<ReturnType<TableStore["getEntity"]>>;
    try {
      row = await this.#runner.run("get", table, (s) => s.getEntity(table, partitionKey, rowKey));
    } catch (error) {
      // The remote table does not exist yet: nothing is mirrored (the write creates it).
      if (error instanceof StoreError && error.statusCode === 404) row = undefined;
      else throw error;
    }
    return readSummaryState(this.#model, summary, row);
  }

  /** Inserts (no row yet) or replaces conditional on `etag`; creates the remote table on first use. */
  async #write(table: string, row: WireEntity, etag: string | undefined): Promise<{ etag: string }> {
    const write = () =>
      this.#runner.run("mirrorSummary", table, (s) =>
        etag === undefined ? s.insert(table, row) : s.update(table, row, "replace", etag),
      );
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof StoreError && error.statusCode === 404 && etag === undefined)) throw error;
      await this.#runner.run("createTable", table, (s) => s.createTable(table));
      return write();
    }
  }
}

/** Whether two totals hold the same values (a contribution is a copy, so exactly, Doubles included). */
function sameExactly(a: SummaryTotals, b: SummaryTotals): boolean {
  for (const [name, value] of a) if (b.get(name) !== value) return false;
  return a.size === b.size;
}

/** The remote summary's table and key of one source partition, for reports. */
export function contributionPlace(
  model: EntityModel,
  summary: RemoteSummary,
  runner: TableNaming,
  sourcePartitionKey: string,
): { table: string; partitionKey: string; rowKey: string } {
  return {
    table: runner.tableName(summary.remote.table),
    partitionKey: remotePartitionOf(model, summary, sourcePartitionKey),
    rowKey: contributionRowKey(summary, sourcePartitionKey),
  };
}

/** Every row of a remote summary's table that `filter` keeps, page by page (none without the table). */
export async function* remoteTableRows(
  runner: Requests,
  operation: string,
  table: string,
  filter: string,
): AsyncIterable<StoredEntity> {
  let continuation: StoreContinuation | undefined;
  do {
    let page: Awaited<ReturnType<TableStore["queryPage"]>>;
    try {
      page = await runner.run(operation, table, (s) =>
        s.queryPage(table, { filter, top: 1000, ...(continuation ? { continuation } : {}) }),
      );
    } catch (error) {
      if (error instanceof StoreError && error.statusCode === 404) return;
      throw error;
    }
    yield* page.items;
    continuation = page.continuation;
  } while (continuation);
}
