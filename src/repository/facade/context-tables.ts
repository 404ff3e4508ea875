import { ValidationError } from "../../errors.js";
import type { TableTemplate } from "../../keys/table-template.js";
import { type EntityClass, type EntityModel, getEntityModel } from "../../schema/entity-model.js";
import { INTENTS_TABLE } from "../core/intent-log.js";
import { listPeriodTables, registerPeriodTables } from "../core/period-tables.js";
import type { Requests, TableNaming } from "../core/requests.js";
import { containerOf } from "../large/large-reference.js";
import { blobsOf, largeColumnsOf } from "../large/large-values.js";
import type { PeriodTableNames } from "../pipeline/period-table-store.js";

/**
 * Creates the tables of these entity classes and of their indexes, where missing. A table per
 * period (of an entity or of an index) gets none here: each period's table is created by its first write.
 */
export async function ensureTablesOf(
  runner: Requests & TableNaming,
  models: readonly EntityModel[],
): Promise<void> {
  const tables = new Set<string>();
  for (const model of models) {
    if (model.tableTemplate === undefined) tables.add(runner.tableName(model.table));
    for (const index of model.indexes.values()) {
      if (index.tableTemplate === undefined) tables.add(runner.tableName(index.table));
      // Copies outside the entity's partition are kept consistent through the intent log.
      if (!index.intraPartition) tables.add(runner.tableName(INTENTS_TABLE));
    }
    for (const summary of model.summaries.values()) {
      if (summary.remote === undefined) continue;
      // A summary in another partition: its table, and the intents that make it repairable.
      tables.add(runner.tableName(summary.remote.table));
      tables.add(runner.tableName(INTENTS_TABLE));
    }
  }
  for (const table of tables) await runner.run("createTable", table, (s) => s.createTable(table));
  // A class's large values' container too, where the store can create one (`BlobStore.createContainer`):
  // otherwise the first upload is refused, creates it, and is sent again (three requests where its plan has one).
  for (const model of models) {
    if (model.tableTemplate !== undefined || largeColumnsOf(model) === undefined) continue;
    const table = runner.tableName(model.table);
    await runner.run(
      "createContainer",
      table,
      (s) => s.blobs?.createContainer?.(containerOf(table)) ?? Promise.resolve(),
    );
  }
}

/** The existing period tables of an entity with the end of each period, ascending; `ValidationError` for a fixed table. */
export function periodTablesOf(
  runner: Requests & TableNaming,
  entityClass: EntityClass,
  method: string,
): Promise<{ name: string; end: Date }[]> {
  const model = getEntityModel(entityClass);
  const template = model.tableTemplate;
  if (template === undefined) {
    throw new ValidationError(
      "period-table",
      `${method}: ${model.name} has a fixed table '${model.table}', not a table per period ('Logs{at:month}')`,
    );
  }
  return listPeriodTables(runner, template);
}

/** `db.dropTables`: the period tables ending at or before `before`, then its indexes' own period tables. */
export async function dropPeriodTables(
  runner: Requests & TableNaming,
  periodTables: PeriodTableNames,
  entityClass: EntityClass,
  options: { before: Date },
): Promise<string[]> {
  const before = options?.before;
  if (!(before instanceof Date) || Number.isNaN(before.getTime())) {
    throw new ValidationError("drop-before", "dropTables needs { before: Date } with a valid Date", {
      field: "before",
    });
  }
  const dropped: string[] = [];
  const large = largeColumnsOf(getEntityModel(entityClass) as EntityModel) !== undefined;
  const periods = await periodTablesOf(runner, entityClass, "dropTables");
  // The cut-off is stored first, so no late write (of any process) re-creates a table dropped below.
  await recordCutoffs(runner, periodTables, entityClass, before);
  for (const { name, end } of periods) {
    if (end.getTime() > before.getTime()) break;
    await runner.run("deleteTable", name, (s) => s.deleteTable(name));
    // The rows first, then their blobs: no row ever points at a removed blob.
    if (large) {
      const container = containerOf(name);
      await runner.run("deleteContainer", name, (s) => blobsOf(s).deleteContainer(container));
    }
    dropped.push(name);
  }
  // Index copies kept in a table per period of their own go with their periods (copies in a fixed
  // table outlive their entities as orphans, which repairIndexes({ scan: true }) removes).
  const model = getEntityModel(entityClass);
  const templates = new Map<string, TableTemplate>();
  for (const index of model.indexes.values()) {
    const template = index.tableTemplate;
    if (template && template.source !== model.tableTemplate?.source) templates.set(template.source, template);
  }
  for (const template of templates.values()) {
    for (const { name, end } of await listPeriodTables(runner, template)) {
      if (end.getTime() > before.getTime()) break;
      await runner.run("deleteTable", name, (s) => s.deleteTable(name));
      dropped.push(name);
    }
  }
  return dropped;
}

/** Records `before` as the dropped-period cut-off of the entity's table template and its indexes' own. */
async function recordCutoffs(
  runner: Requests,
  periodTables: PeriodTableNames,
  entityClass: EntityClass,
  before: Date,
): Promise<void> {
  const model = getEntityModel(entityClass);
  registerPeriodTables(periodTables, model);
  const templates = new Set<TableTemplate>();
  if (model.tableTemplate) templates.add(model.tableTemplate);
  for (const index of model.indexes.values()) if (index.tableTemplate) templates.add(index.tableTemplate);
  const cutoffs = periodTables.cutoffs;
  for (const template of templates) {
    await runner.run("recordCutoff", cutoffs.table, (s) => cutoffs.record(s, template, before));
  }
}
