import type { EntityModel, SummaryModel } from "../../schema/entity-model.js";
import type { StoreContinuation, StoredEntity } from "../../store/table-store.js";
import { SUMMARY_PROPERTY } from "../../wire/system-properties.js";
import { upcasterOf } from "../core/entity-rows.js";
import type { Backoff, Requests, Scoped, TableNaming } from "../core/requests.js";
import { WideScan } from "../core/wide-reads.js";
import {
  contributionRowKey,
  RemoteSummaries,
  type RemoteSummary,
  remotePartitionOf,
  remoteSummariesOf,
  sourceOf,
  summarySource,
} from "./remote-summaries.js";
import {
  absoluteTotals,
  addTotals,
  contributionOf,
  isSummarizedRow,
  publicValues,
  readSummaryState,
  type SummaryTotals,
  type SummaryValues,
  sameTotals,
  summaryMarker,
  zeroTotals,
} from "./summary-row.js";

/** One summary row that disagrees with a recount of its partition (`verifySummaries`). */
export interface SummaryDrift {
  /** The summary's name. */
  summary: string;
  /** The period's table (physical name), for an entity with a table per period; the remote table for a summary in another partition. */
  table?: string;
  partitionKey: string;
  /** The summary row's RowKey. */
  rowKey: string;
  /** For a summary in another partition: the source partition whose contribution row (`partitionKey`, `rowKey`) drifts. */
  sourcePartitionKey?: string;
  /** What the summary row holds (zeros when it is missing). */
  stored: SummaryValues;
  /** What the partition's entities add up to. */
  actual: SummaryValues;
}

/** Per partition and summary: the recount, the sum of magnitudes (the scale of Double rounding), and the stored values. */
interface Tally {
  actual: SummaryTotals;
  magnitude: SummaryTotals;
  stored: SummaryTotals | undefined;
}

/**
 * Reads the entity's whole table (`table`: one period's, for a table per period) once, recounts every summary of every partition from the entity
 * rows and compares it with the summary rows; changes nothing. Integer sums and counts must match
 * exactly; Double sums within rounding (1e-9 of the sum of magnitudes), since adding floats in
 * another order rounds differently.
 */
export async function verifySummaries<T extends object>(
  model: EntityModel<T>,
  runner: Requests & TableNaming & Scoped & Backoff,
  table: string = runner.tableName(model.table),
): Promise<SummaryDrift[]> {
  const recount = new SummaryRecount(model);
  await scanRows(model, runner, table, (row) => recount.visit(row));
  const drift = localDrift(model, table, recount);
  for (const summary of remoteSummariesOf(model))
    drift.push(...(await remoteDrift(model, runner, table, summary, recount.tallies)));
  return drift.sort((a, b) =>
    a.partitionKey === b.partitionKey
      ? a.summary.localeCompare(b.summary)
      : a.partitionKey < b.partitionKey
        ? -1
        : 1,
  );
}

/** The tallies of a scan, per partition and summary: stored summary rows read, entity rows recounted. */
class SummaryRecount {
  readonly summaries: readonly SummaryModel[];
  readonly tallies = new Map<string, Map<string, Tally>>();
  readonly #model: EntityModel;
  readonly #upcast: ReturnType<typeof upcasterOf>;

  constructor(model: EntityModel) {
    this.#model = model;
    this.summaries = [...model.summaries.values()];
    this.#upcast = upcasterOf(model);
  }

  /** Takes one row: a summary row's stored totals, or an entity's contribution to each summary. */
  visit(row: StoredEntity): void {
    const model = this.#model;
    const marker = row[SUMMARY_PROPERTY];
    if (marker !== undefined) {
      const summary = this.summaries.find((candidate) => summaryMarker(model, candidate) === marker);
      if (summary && row.rowKey === summary.rowKey) {
        this.#tallyOf(row.partitionKey, summary).stored = readSummaryState(model, summary, row).totals;
      }
      return;
    }
    if (!isSummarizedRow(model, row)) return;
    const entity = this.#upcast ? this.#upcast(row) : row;
    for (const summary of this.summaries) {
      const tally = this.#tallyOf(row.partitionKey, summary);
      const contribution = contributionOf(summary, entity);
      tally.actual = addTotals(tally.actual, contribution, 1);
      tally.magnitude = addTotals(tally.magnitude, absoluteTotals(contribution), 1);
    }
  }

  #tallyOf(partitionKey: string, summary: SummaryModel): Tally {
    let byName = this.tallies.get(partitionKey);
    if (!byName) {
      byName = new Map();
      this.tallies.set(partitionKey, byName);
    }
    let tally = byName.get(summary.name);
    if (!tally) {
      tally = { actual: zeroTotals(summary), magnitude: zeroTotals(summary), stored: undefined };
      byName.set(summary.name, tally);
    }
    return tally;
  }
}

/** Every row of the table, page by page; a wide entity once, whole (its summed columns may be on any of its rows). */
async function scanRows(
  model: EntityModel,
  runner: Requests & TableNaming & Scoped & Backoff,
  table: string,
  visit: (row: StoredEntity) => void,
): Promise<void> {
  const wide = model.wide ? new WideScan(runner, table) : undefined;
  let continuation: StoreContinuation | undefined;
  do {
    const page = await runner.run("verifyScan", table, (s) =>
      s.queryPage(table, { top: 1000, ...(continuation ? { continuation } : {}) }),
    );
    for (const item of page.items) for (const row of wide ? await wide.add(item) : [item]) visit(row);
    continuation = page.continuation;
  } while (continuation);
  for (const row of wide ? await wide.end() : []) visit(row);
}

/** The summary rows in the entities' own partitions that disagree with their recount. */
function localDrift(model: EntityModel, table: string, recount: SummaryRecount): SummaryDrift[] {
  const drift: SummaryDrift[] = [];
  for (const [partitionKey, byName] of recount.tallies) {
    for (const summary of recount.summaries) {
      // A remote summary's local row is internal: its drift shows at the contribution (below), which mirrors it.
      if (summary.remote !== undefined) continue;
      const tally = byName.get(summary.name);
      if (!tally) continue;
      const stored = tally.stored ?? zeroTotals(summary);
      if (sameTotals(stored, tally.actual, tally.magnitude)) continue;
      drift.push({
        summary: summary.name,
        ...(model.tableTemplate === undefined ? {} : { table }),
        partitionKey,
        rowKey: summary.rowKey,
        stored: publicValues(summary, stored),
        actual: publicValues(summary, tally.actual),
      });
    }
  }
  return drift;
}

/**
 * The drift of a summary kept in another partition: per source partition, its contribution row
 * against the recount of that partition (the local row is what gets mirrored, so a stale local row
 * shows here too). One range query per remote partition the table's partitions map to.
 */
async function remoteDrift(
  model: EntityModel,
  runner: Requests & TableNaming & Scoped & Backoff,
  table: string,
  summary: RemoteSummary,
  tallies: ReadonlyMap<string, ReadonlyMap<string, Tally>>,
): Promise<SummaryDrift[]> {
  const mirrors = new RemoteSummaries(model, runner);
  const byRemote = new Map<string, string[]>();
  for (const partitionKey of tallies.keys()) {
    const source = summarySource(model, runner, table, partitionKey);
    const target = remotePartitionOf(model, summary, source);
    const sources = byRemote.get(target);
    if (sources === undefined) byRemote.set(target, [source]);
    else sources.push(source);
  }
  // For a table per period, the contributions of this period's table only (the others are verified with theirs).
  const ours = (source: string) => sourceOf(model, runner, source).table === table;
  const drift: SummaryDrift[] = [];
  for (const [partitionKey, sources] of byRemote) {
    const stored = await mirrors.contributions(summary, partitionKey);
    for (const source of new Set([...sources, ...[...stored.keys()].filter(ours)])) {
      const sourcePartitionKey = sourceOf(model, runner, source).partitionKey;
      const tally = tallies.get(sourcePartitionKey)?.get(summary.name);
      const actual = tally?.actual ?? zeroTotals(summary);
      const kept = stored.get(source)?.totals ?? zeroTotals(summary);
      const local = tally?.stored ?? zeroTotals(summary);
      if (sameTotals(kept, actual, tally?.magnitude) && sameTotals(local, actual, tally?.magnitude)) continue;
      drift.push({
        summary: summary.name,
        table: mirrors.tableOf(summary),
        partitionKey,
        rowKey: contributionRowKey(summary, source),
        sourcePartitionKey,
        stored: publicValues(summary, kept),
        actual: publicValues(summary, actual),
      });
    }
  }
  return drift;
}
