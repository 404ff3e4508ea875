import { ConcurrencyError } from "../../errors.js";
import { quoteString } from "../../query/odata.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity } from "../../store/table-store.js";
import { SUMMARY_PROPERTY } from "../../wire/system-properties.js";
import { listPeriodTables } from "../core/period-tables.js";
import type { Backoff, Requests, Scoped, TableNaming } from "../core/requests.js";
import { type RemoteSummary, remoteSummariesOf, remoteTableRows, sourceOf } from "./remote-summaries.js";
import { SummaryCache, summaryCacheKey } from "./summary-cache.js";
import { publicValues, readSummaryState, SOURCE_PROPERTY, summaryMarker, zeroTotals } from "./summary-row.js";
import type { SummaryDrift } from "./summary-verifier.js";

type Runner = Requests & TableNaming & Scoped & Backoff;

/**
 * The contribution rows, in the remote summaries of an entity kept in a table per period, of period
 * tables that no longer exist (dropped by `db.dropTables`): their entities are gone, so they add up
 * to zeros and each such row is drift (`actual` zeros). One scan of each remote summary's table
 * (its rows of this summary only). A contribution is written after its period's table exists, so
 * the period tables are listed after the scan: a table created meanwhile is not taken for dropped.
 * With `repair`, each such row is deleted (conditional on the ETag it was read with).
 */
export async function droppedPeriodDrift(
  model: EntityModel,
  runner: Runner,
  repair: boolean,
): Promise<SummaryDrift[]> {
  const template = model.tableTemplate;
  if (template === undefined) return [];
  const found: Array<{ summary: RemoteSummary; table: string; row: StoredEntity; source: string }> = [];
  for (const summary of remoteSummariesOf(model)) {
    const table = runner.tableName(summary.remote.table);
    const filter = `${SUMMARY_PROPERTY} eq ${quoteString(summaryMarker(model, summary))}`;
    for await (const row of remoteTableRows(runner, "verifyScan", table, filter)) {
      const source = row[SOURCE_PROPERTY];
      if (typeof source === "string") found.push({ summary, table, row, source });
    }
  }
  if (found.length === 0) return [];
  const existing = new Set((await listPeriodTables(runner, template)).map((t) => t.name));
  const drift: SummaryDrift[] = [];
  for (const { summary, table, row, source } of found) {
    const from = sourceOf(model, runner, source);
    if (existing.has(from.table)) continue;
    if (repair && !(await deleteContribution(model, runner, summary, table, row))) continue;
    drift.push({
      summary: summary.name,
      table,
      partitionKey: row.partitionKey,
      rowKey: row.rowKey,
      sourcePartitionKey: from.partitionKey,
      stored: publicValues(summary, readSummaryState(model, summary, row).totals),
      actual: publicValues(summary, zeroTotals(summary)),
    });
  }
  return drift.sort((a, b) => {
    if (a.partitionKey !== b.partitionKey) return a.partitionKey < b.partitionKey ? -1 : 1;
    return a.rowKey < b.rowKey ? -1 : 1;
  });
}

/** Deletes a dropped period's contribution row if it is still as read; resolves whether it did. */
async function deleteContribution(
  model: EntityModel,
  runner: Runner,
  summary: RemoteSummary,
  table: string,
  row: StoredEntity,
): Promise<boolean> {
  SummaryCache.of(runner.scope).forget(
    summaryCacheKey(table, row.partitionKey, row.rowKey, summaryMarker(model, summary)),
  );
  try {
    return await runner.run("repairSummary", table, (s) =>
      s.delete(table, row.partitionKey, row.rowKey, row.etag),
    );
  } catch (error) {
    // Changed since the scan (a dropped period's table is never written again): left for the next repair.
    if (error instanceof ConcurrencyError) return false;
    throw error;
  }
}
