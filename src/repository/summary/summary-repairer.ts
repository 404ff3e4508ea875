import { randomBytes } from "node:crypto";
import { ConcurrencyError, EntityAlreadyExistsError } from "../../errors.js";
import { quoteString } from "../../query/odata.js";
import type { EntityModel, SummaryModel } from "../../schema/entity-model.js";
import type { StoreContinuation, StoredEntity } from "../../store/table-store.js";
import { upcasterOf } from "../core/entity-rows.js";
import { isTableNotFound } from "../core/period-tables.js";
import type { Backoff, Requests, Scoped, TableNaming } from "../core/requests.js";
import { WideScan } from "../core/wide-reads.js";
import {
  RemoteSummaries,
  type RemoteSummary,
  remotePartitionOf,
  sourceOf,
  summarySource,
} from "./remote-summaries.js";
import { SummaryCache, summaryCacheKey } from "./summary-cache.js";
import {
  absoluteTotals,
  addTotals,
  contributionOf,
  isSummarizedRow,
  nextSummaryRow,
  readSummaryState,
  type SummaryTotals,
  sameTotals,
  summaryMarker,
  zeroTotals,
} from "./summary-row.js";
import { type SummaryDrift, verifySummaries } from "./summary-verifier.js";

/** Recount rounds per summary row before giving up (each lost round means a write committed meanwhile). */
const MAX_ROUNDS = 20;

/**
 * Rewrites every summary row that disagrees with a recount (`verifySummaries`) and resolves to the drift
 * it corrected. Each drifting partition is recounted again between two reads of its summary row: every
 * write through a repository changes that row, so an unchanged ETag proves no such write happened during
 * the recount, and the corrected row is written conditional on it (a lost race recounts again).
 */
export async function repairSummaries<T extends object>(
  model: EntityModel<T>,
  runner: Requests & TableNaming & Scoped & Backoff,
  table: string = runner.tableName(model.table),
): Promise<SummaryDrift[]> {
  const drift = await verifySummaries(model, runner, table);
  for (const found of drift) {
    const summary = model.summaries.get(found.summary) as SummaryModel;
    const partitionKey = found.sourcePartitionKey ?? found.partitionKey;
    await repairRow(model, runner, table, partitionKey, summary);
    // A remote summary: its local row is exact now; the contribution follows it.
    if (summary.remote !== undefined) {
      const source = summarySource(model as EntityModel, runner, table, partitionKey);
      await mirrorLocal(model as EntityModel, runner, table, source, summary as RemoteSummary);
    }
  }
  return drift;
}

/**
 * Mirrors a source partition's local row of a remote summary (what `db.repair()` does for each
 * pending intent); `table` holds it, `source` names it (see `summarySource`). A contribution that claims the local version or a later one but holds other
 * values (written by a bypass, or left from a local row since recreated) is outrun: the local row is
 * rewritten with a version past it (conditional on its ETag), then mirrored, so versions only grow.
 * Resolves whether it wrote the contribution.
 */
export async function mirrorLocal(
  model: EntityModel,
  runner: Requests & TableNaming & Scoped & Backoff,
  table: string,
  source: string,
  summary: RemoteSummary,
): Promise<boolean> {
  const mirrors = new RemoteSummaries(model, runner);
  const { partitionKey: sourcePartitionKey } = sourceOf(model, runner, source);
  for (let round = 1; ; round++) {
    let row: StoredEntity | undefined;
    try {
      row = await runner.run("get", table, (s) => s.getEntity(table, sourcePartitionKey, summary.rowKey));
    } catch (error) {
      // A period's table that was never made (the write's intent was recorded, then it stopped): the
      // period holds no entity, so there is nothing to mirror (a contribution is written only after it).
      if (isTableNotFound(error)) return false;
      throw error;
    }
    const local = readSummaryState(model, summary, row);
    const target = remotePartitionOf(model, summary, source);
    const kept = (await mirrors.contributions(summary, target)).get(source);
    if (kept === undefined || kept.sequence < local.sequence)
      return mirrors.mirror(summary, source, local, true);
    if (sameTotals(kept.totals, local.totals) && sameTotals(local.totals, kept.totals)) return false;
    const token = `r${randomBytes(6).toString("base64url")}`;
    const { row: next } = nextSummaryRow(
      model,
      summary,
      sourcePartitionKey,
      { ...local, sequence: kept.sequence },
      local.totals,
      token,
    );
    try {
      await runner.run("repairSummary", table, (s) =>
        local.etag === undefined ? s.insert(table, next) : s.update(table, next, "replace", local.etag),
      );
    } catch (error) {
      const race = error instanceof ConcurrencyError || error instanceof EntityAlreadyExistsError;
      if (!race || round >= MAX_ROUNDS) throw error;
      await runner.retry.contend(round);
    }
  }
}

async function repairRow(
  model: EntityModel,
  runner: Requests & Scoped & Backoff,
  table: string,
  partitionKey: string,
  summary: SummaryModel,
): Promise<void> {
  const read = () => runner.run("get", table, (s) => s.getEntity(table, partitionKey, summary.rowKey));
  SummaryCache.of(runner.scope).forget(
    summaryCacheKey(table, partitionKey, summary.rowKey, summaryMarker(model, summary)),
  );
  for (let round = 1; ; round++) {
    const before = await read();
    const { actual, magnitude } = await recount(model, runner, table, partitionKey, summary);
    const after = await read();
    const state = readSummaryState(model, summary, after);
    if (before?.etag !== after?.etag) {
      if (round >= MAX_ROUNDS) throw new ConcurrencyError({ table, partitionKey, rowKey: summary.rowKey });
      await runner.retry.contend(round);
      continue;
    }
    if (after !== undefined && sameTotals(state.totals, actual, magnitude)) return;
    const token = `r${randomBytes(6).toString("base64url")}`;
    const { row } = nextSummaryRow(model, summary, partitionKey, state, actual, token);
    try {
      await runner.run("repairSummary", table, (s) =>
        state.etag === undefined ? s.insert(table, row) : s.update(table, row, "replace", state.etag),
      );
      return;
    } catch (error) {
      // Another write (or our own attempt whose answer was lost): recount and compare again.
      const race = error instanceof ConcurrencyError || error instanceof EntityAlreadyExistsError;
      if (!race || round >= MAX_ROUNDS) throw error;
      await runner.retry.contend(round);
    }
  }
}

/** The summary of one partition recounted from its entity rows (one partition query). */
async function recount(
  model: EntityModel,
  runner: Requests,
  table: string,
  partitionKey: string,
  summary: SummaryModel,
): Promise<{ actual: SummaryTotals; magnitude: SummaryTotals }> {
  const upcast = upcasterOf(model);
  let actual = zeroTotals(summary);
  let magnitude = zeroTotals(summary);
  let continuation: StoreContinuation | undefined;
  const filter = `PartitionKey eq ${quoteString(partitionKey)}`;
  const count = (row: StoredEntity) => {
    if (!isSummarizedRow(model, row)) return;
    const contribution = contributionOf(summary, upcast ? upcast(row) : row);
    actual = addTotals(actual, contribution, 1);
    magnitude = addTotals(magnitude, absoluteTotals(contribution), 1);
  };
  // A wide entity counts once, whole (its summed columns may be on any of its rows).
  const wide = model.wide ? new WideScan(runner, table) : undefined;
  do {
    const page = await runner.run("repairScan", table, (s) =>
      s.queryPage(table, { filter, top: 1000, ...(continuation ? { continuation } : {}) }),
    );
    for (const item of page.items) for (const row of wide ? await wide.add(item) : [item]) count(row);
    continuation = page.continuation;
  } while (continuation);
  for (const row of wide ? await wide.end() : []) count(row);
  return { actual, magnitude };
}
