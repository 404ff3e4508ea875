import { ConcurrencyError, EntityAlreadyExistsError, StoreError } from "../../errors.js";
import type { TableTemplate } from "../../keys/table-template.js";
import type { TableStore } from "../../store/table-store.js";

/**
 * tablekit's bookkeeping table of dropped periods: one row per period template (RowKey: its source,
 * e.g. `Logs{at:month}`) holding the latest `before` of `db.dropTables` as `before`. It is kept in the
 * store, so every process sees a drop; the tables of those periods are never re-created by a late write.
 */
export const PERIODS_TABLE = "TablekitPeriods";
const PARTITION = "dropped";

/** The dropped-period cut-offs of one context's tables (behind its table prefix), cached once seen. */
export class PeriodCutoffs {
  readonly table: string;
  /** Cut-offs seen, in ms, per template source: they only move forward, so a cached one stays true. */
  readonly #known = new Map<string, number>();

  constructor(prefix: string) {
    this.table = prefix + PERIODS_TABLE;
  }

  /** The cut-off this context has seen for `template` (no request). */
  known(template: TableTemplate): Date | undefined {
    const ms = this.#known.get(template.source);
    return ms === undefined ? undefined : new Date(ms);
  }

  /** Reads the stored cut-off of `template` (one point read; none when the bookkeeping table does not exist). */
  async read(store: TableStore, template: TableTemplate): Promise<Date | undefined> {
    let row: Awaited<ReturnType<TableStore["getEntity"]>>;
    try {
      row = await store.getEntity(this.table, PARTITION, template.source);
    } catch (error) {
      // No bookkeeping table: nothing was ever dropped in this account (under this prefix).
      if (error instanceof StoreError && error.statusCode === 404) return this.known(template);
      throw error;
    }
    const before = row?.before;
    if (before instanceof Date) this.#remember(template, before.getTime());
    return this.known(template);
  }

  /** Stores `before` as the cut-off of `template` unless a later one is stored already (conditional writes). */
  async record(store: TableStore, template: TableTemplate, before: Date): Promise<void> {
    await store.createTable(this.table);
    for (;;) {
      const row = await store.getEntity(this.table, PARTITION, template.source);
      const stored = row?.before instanceof Date ? row.before.getTime() : undefined;
      if (stored !== undefined && stored >= before.getTime()) {
        this.#remember(template, stored);
        return;
      }
      const entity = { partitionKey: PARTITION, rowKey: template.source, before };
      try {
        if (row === undefined) await store.insert(this.table, entity);
        else await store.update(this.table, entity, "replace", row.etag);
        this.#remember(template, before.getTime());
        return;
      } catch (error) {
        // Another process recorded one meanwhile: read it again and keep the later of the two.
        if (!(error instanceof EntityAlreadyExistsError || error instanceof ConcurrencyError)) throw error;
      }
    }
  }

  #remember(template: TableTemplate, ms: number): void {
    const known = this.#known.get(template.source);
    if (known === undefined || ms > known) this.#known.set(template.source, ms);
  }
}
