import { EntityNotFoundError, ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { KeyValues } from "../../schema/key-fields.js";
import { etagIn } from "../../serialization/entity-etag.js";
import type { TableStore, WireEntity } from "../../store/table-store.js";
import type { BulkOptions, BulkResult } from "../core/bulk/bulk-types.js";
import type { BulkKind } from "../core/bulk/bulk-writer.js";
import { type PatchChanges, patchInstance } from "../core/patch-changes.js";
import { isTableNotFound, periodBulk } from "../core/period-tables.js";
import type { RequestContext } from "../core/requests.js";
import { writeMode } from "../core/write-mode.js";
import type { PeriodTableNames } from "../pipeline/period-table-store.js";
import { withFeedSteps } from "./explain-feed.js";
import { assumedOperations, explainPlainBulk, inSequence, rowAt } from "./explain-forms.js";
import {
  assumedState,
  type ExplainedOperation,
  type ExplainOptions,
  explainWrite,
  type WritePlan,
} from "./explain-write.js";
import { mutateLoop } from "./mutate-loop.js";
import { PlannedBulk } from "./planned-bulk.js";
import { RepositoryBase } from "./repository-base.js";
import type {
  DeleteOptions,
  MutateOptions,
  PatchOptions,
  UpdateOptions,
  UpsertOptions,
} from "./repository-options.js";

/**
 * Typed access to one entity class: point reads, writes with ETag concurrency, and queries.
 * @example
 * const employees = db.repository(Employee);
 * await employees.insert(e);
 * const found = await employees.get({ department: "Sales", employeeId: 223 });
 */
export class Repository<T extends object> extends RepositoryBase<T> {
  /** @internal Use `TableContext.repository(Entity)`. */
  static build<T extends object>(
    model: EntityModel<T>,
    runner: RequestContext,
    store: TableStore,
    periodTables: PeriodTableNames,
  ): Repository<T> {
    return new Repository(model, runner, store, periodTables, undefined);
  }

  private constructor(
    model: EntityModel<T>,
    runner: RequestContext,
    store: TableStore,
    periodTables: PeriodTableNames,
    periodTable: string | undefined,
  ) {
    super(model, runner, store, periodTables, periodTable);
  }

  protected forPeriod(table: string): Repository<T> {
    return new Repository(this.model, this.runner, this.store, this.periodTableNames, table);
  }

  /** The repository of the period table that `values` (an entity or key fields) belongs to. */
  #route(values: unknown): Repository<T> | undefined {
    return this.route(values) as Repository<T> | undefined;
  }

  /**
   * The repository of one period's table, for an entity with a table per period (`Logs{at:month}`):
   * its `find`, `scan` and `latest` read that period only and need no period field, so a partition
   * can be read whole even when the instant is also in its RowKey. `ValidationError` for a fixed table.
   * @example
   * for await (const entry of logs.period(new Date("2026-11-01")).find({ source: "web" })) console.log(entry);
   */
  period(at: Date): Repository<T> {
    const template = this.model.tableTemplate;
    if (template === undefined || this.periods === undefined) {
      throw new ValidationError(
        "period-table",
        `${this.model.name}: period() needs a table per period ('Logs{at:month}'); its table '${this.model.table}' is fixed`,
      );
    }
    return this.#route({ [template.field]: at }) as Repository<T>;
  }

  /**
   * Runs a write; when the period's table does not exist yet, creates it and runs the write once more.
   * The store creates it for the write requests themselves (see period-table-store.ts); this covers
   * the reads an indexed write makes first.
   */
  #creatingTable<R>(write: () => Promise<R>): Promise<R> {
    // Only a period table is missing because nobody wrote to it yet: other writes run as they are.
    return this.isPeriodTable ? this.#creatingPeriodTable(write) : write();
  }

  async #creatingPeriodTable<R>(write: () => Promise<R>): Promise<R> {
    try {
      return await write();
    } catch (error) {
      if (!isTableNotFound(error)) throw error;
      const table = this.table;
      await this.runner.run("createTable", table, (s) => s.createTable(table));
      return write();
    }
  }

  /** Inserts; `EntityAlreadyExistsError` if the key exists. Resolves to the same entity, its ETag tracked. */
  insert(entity: T): Promise<T> {
    return this.#insert(entity, undefined);
  }

  /** Inserts or replaces (default) or merges, without reading first. */
  upsert(entity: T, options: UpsertOptions = {}): Promise<T> {
    return this.#upsert(entity, options, undefined);
  }

  /**
   * Replaces (default) or merges an existing entity, only if it is unchanged since it was read
   * (its tracked ETag); `ConcurrencyError` otherwise, `EntityNotFoundError` if it is gone.
   */
  update(entity: T, options: UpdateOptions = {}): Promise<T> {
    return this.#update(entity, options, undefined);
  }

  /**
   * @internal Writes `entity` by the rules of `insert`, `upsert` or `update`, as the row `prepared`:
   * a `db.eventually` step's, whose large columns point at blobs uploaded before its intent was recorded
   * (so a replay by repair writes the same references). The large-value stage uploads nothing then.
   */
  writePrepared(
    kind: "insert" | "upsert" | "update",
    entity: T,
    prepared: WireEntity,
    options: UpdateOptions = {},
  ): Promise<T> {
    if (kind === "insert") return this.#insert(entity, prepared);
    if (kind === "upsert") return this.#upsert(entity, options, prepared);
    return this.#update(entity, options, prepared);
  }

  async #insert(entity: T, prepared: WireEntity | undefined): Promise<T> {
    const period = this.#route(entity);
    if (period) return period.#insert(entity, prepared);
    await this.#creatingTable(() => this.writer.insert(entity, prepared));
    return entity;
  }

  #upsert(entity: T, options: UpsertOptions, prepared: WireEntity | undefined): Promise<T> {
    // No async frame: every upsert comes this way; a refusal is a rejection all the same.
    try {
      const period = this.#route(entity);
      if (period) return period.#upsert(entity, options, prepared);
      const mode = writeMode(options.mode);
      // A period table may be missing until its first write; any other is written as it is (no closure).
      const written = this.isPeriodTable
        ? this.#creatingPeriodTable(() => this.writer.upsert(entity, mode, prepared))
        : this.writer.upsert(entity, mode, prepared);
      return written.then(() => entity);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async #update(entity: T, options: UpdateOptions, prepared: WireEntity | undefined): Promise<T> {
    const period = this.#route(entity);
    if (period) return period.#update(entity, options, prepared);
    const mode = writeMode(options.mode);
    const ifMatch = options.ifMatch ?? etagIn(entity, this.runner.scope);
    if (ifMatch === undefined) {
      throw new ValidationError(
        "etag-required",
        `${this.model.name}: update needs the entity's ETag (read it through a repository of this context first) or { ifMatch: "*" } to overwrite unconditionally`,
        { field: "ifMatch" },
      );
    }
    await this.inExistingTable(
      () => this.writer.update(entity, mode, ifMatch, prepared),
      () => {
        throw new EntityNotFoundError({ table: this.table, ...this.keyOf(entity) });
      },
    );
    return entity;
  }

  /** Deletes by key (or entity); resolves whether it existed. Conditional when an ETag is known. */
  async delete(key: KeyValues<T>, options: DeleteOptions = {}): Promise<boolean> {
    this.keyOf(key);
    const period = this.#route(key);
    if (period) return period.delete(key, options);
    return this.inExistingTable(
      () => this.writer.delete(key, options.ifMatch),
      () => false,
    );
  }

  /**
   * Merges only the given columns into the stored entity, without reading it first: an
   * InsertOrMerge (creating the entity from its key and these columns when absent), or with
   * `ifMatch` a Merge of that version only (`ConcurrencyError` if it changed, `EntityNotFoundError`
   * if absent). One request for an entity without indexes; with indexes the entity is read and
   * written with its copies, which may depend on the changed columns. Key fields cannot change
   * and `null` cannot remove a column (`ValidationError`); `undefined` values are skipped.
   * @example
   * await employees.patch({ department: "Sales", employeeId: 223 }, { age: 31 });
   */
  async patch(key: KeyValues<T>, changes: PatchChanges<T>, options: PatchOptions = {}): Promise<void> {
    this.keyOf(key);
    const partial = patchInstance(this.model, key, changes);
    // A table per period: the key names the period, as for get and delete.
    const period = this.#route(key);
    if (period) return period.patch(key, changes, options);
    const ifMatch = options.ifMatch;
    if (ifMatch === undefined) {
      await this.#creatingTable(() => this.writer.upsert(partial, "merge"));
      return;
    }
    await this.inExistingTable(
      () => this.writer.update(partial, "merge", ifMatch),
      () => {
        throw new EntityNotFoundError({ table: this.table, ...this.keyOf(key) });
      },
    );
  }

  /**
   * Optimistic read-modify-write: reads the entity, applies `change` (which may edit it in place
   * or return a replacement), writes it back conditional on the ETag it read, and on a concurrent
   * change re-reads and re-applies, up to `attempts` times. Resolves the written entity, or
   * `undefined` when the entity is absent and no `create` is given.
   * @example
   * await counters.mutate({ name: "visits" }, (c) => { c.count += 1; }, { attempts: 20 });
   */
  async mutate(
    key: KeyValues<T>,
    change: (entity: T) => unknown,
    options: MutateOptions<T> = {},
  ): Promise<T | undefined> {
    this.keyOf(key);
    const period = this.#route(key);
    if (period) return period.mutate(key, change, options);
    return mutateLoop(this.model.name, this.table, key, change, options, {
      get: (k) => this.get(k as KeyValues<T>),
      keyOf: (e) => this.keyOf(e),
      insert: (e) => this.insert(e),
      update: (e, ifMatch) => this.update(e, { ifMatch }),
      etagOf: (e) => etagIn(e, this.runner.scope),
    });
  }

  /**
   * Inserts many entities as entity group transactions (≤ 100 per partition per request),
   * partitions in parallel, streaming from an array, iterable or async iterable. Each batch is
   * atomic; the bulk write is not: failed batches are listed in the result and the rest go on.
   * @example
   * const result = await employees.bulkInsert(rows, { concurrency: 8, onProgress: (p) => console.log(p.done) });
   */
  async bulkInsert(items: Iterable<T> | AsyncIterable<T>, options: BulkOptions = {}): Promise<BulkResult<T>> {
    if (this.periods)
      return periodBulk(
        this.model as EntityModel<object>,
        items,
        (item) => this.#periodOf(item),
        (r, group) => r.bulkInsert(group, options),
      );
    // A batch meeting a missing period table creates it and is sent again (period-table-store.ts).
    return this.bulk.bulkInsert(items, options);
  }

  /** Upserts many entities (replace by default, or merge) in batches; see `bulkInsert`. */
  async bulkUpsert(
    items: Iterable<T> | AsyncIterable<T>,
    options: BulkOptions & UpsertOptions = {},
  ): Promise<BulkResult<T>> {
    if (this.periods)
      return periodBulk(
        this.model as EntityModel<object>,
        items,
        (item) => this.#periodOf(item),
        (r, group) => r.bulkUpsert(group, options),
      );
    return this.bulk.bulkUpsert(items, writeMode(options.mode), options);
  }

  /** Deletes many entities by key in batches; keys already gone count as deleted. See `bulkInsert`. */
  async bulkDelete(
    keys: Iterable<KeyValues<T>> | AsyncIterable<KeyValues<T>>,
    options: BulkOptions = {},
  ): Promise<BulkResult<Partial<T>>> {
    if (this.periods)
      return periodBulk<Partial<T>, Repository<T>>(
        this.model as EntityModel<object>,
        keys,
        (key) => this.#periodOf(key),
        (r, group) => r.bulkDelete(group as KeyValues<T>[], options),
      );
    return this.inExistingTable(
      () => this.bulk.bulkDelete(keys, options),
      () => ({ written: 0, batches: 0, retries: 0, failed: [] }),
    );
  }

  /**
   * The plan of a write, without sending anything: each step in order with its phase (`before` the
   * commit, the `commit` — one entity group transaction with its operations — or `after` it), its
   * request, table and keys; reads the write needs first are steps too. The plan is exact for the
   * state `options.current` gives (the stored entities, as reads returned them; `value` itself when
   * a read returned it; anything else absent): the write sent from that state sends these requests.
   * @example
   * const { steps } = orders.explainWrite("insert", order); // putBlob, claim, transaction [entity, copy, summary]
   * const stored = await orders.get(key);
   * orders.explainWrite("delete", key, { current: stored ? [stored] : [] });
   */
  explainWrite(operation: ExplainedOperation, value: Partial<T>, options: ExplainOptions<T> = {}): WritePlan {
    const period = this.#route(value);
    if (period) return period.explainWrite(operation, value, options);
    const scope = this.runner.scope;
    // A patch is explained as `patch` sends it: its changes made an instance (a series' slot map included).
    if (operation === "patch") value = this.#patchOf(value);
    const plan = explainWrite(this.model, this.table, this.writer, operation, value, { ...options, scope });
    const assumed = assumedState(this.model, value as T, { ...options, scope });
    const stored = (_: string, partitionKey: string, rowKey: string) =>
      assumed(partitionKey, rowKey) !== undefined;
    return { steps: withFeedSteps(plan.steps, this.runner.feed, stored) };
  }

  /** The instance `patch(key, changes)` writes, for `explainWrite("patch", { ...key, ...changes })`. */
  #patchOf(value: Partial<T>): Partial<T> {
    if (value === null || typeof value !== "object") return value;
    const keyFields = new Set<string>([...this.model.partitionKey.fields, ...this.model.rowKey.fields]);
    const changes = Object.fromEntries(Object.entries(value).filter(([field]) => !keyFields.has(field)));
    return patchInstance(this.model, value, changes as PatchChanges<T>);
  }

  /**
   * The plan of `bulkInsert`, `bulkUpsert` or `bulkDelete` of `items` from the state `options.current`
   * gives, nothing sent (see `explainWrite`): each batch as it is packed, the plan of its transaction;
   * batches of several partitions are sent in parallel (their steps share a `group`).
   * @example
   * const { steps } = await orders.explainBulk("upsert", many); // one transaction per partition's batch
   */
  async explainBulk(
    operation: "insert" | "upsert" | "delete",
    items: readonly Partial<T>[],
    options: ExplainOptions<T> & UpsertOptions = {},
  ): Promise<WritePlan> {
    if (this.periods) return this.#explainPeriodBulk(operation, items, options);
    const write: BulkKind =
      operation === "upsert" ? { kind: "upsert", mode: writeMode(options.mode) } : { kind: operation };
    const all = items as readonly T[];
    const assumed = assumedOperations(this.runner, options);
    const steps =
      this.bulk instanceof PlannedBulk
        ? await this.bulk.explain(all, write, assumed)
        : explainPlainBulk(this.runner, this.model, this.table, all, write);
    const stored = new Set(
      all.flatMap((entity) => {
        const { partitionKey, rowKey } = this.keyOf(entity as KeyValues<T>);
        const model = this.model as unknown as EntityModel<object>;
        return assumed({ entity, model, partitionKey, rowKey }) === undefined
          ? []
          : [rowAt(this.table, partitionKey, rowKey)];
      }),
    );
    return { steps: withFeedSteps(steps, this.runner.feed, (...at) => stored.has(rowAt(...at))) };
  }

  /**
   * The plan of a bulk write of a table per period: each period's bulk write in turn, as `periodBulk`
   * sends them (its batches' groups numbered apart from the other periods').
   */
  async #explainPeriodBulk(
    operation: "insert" | "upsert" | "delete",
    items: readonly Partial<T>[],
    options: ExplainOptions<T> & UpsertOptions,
  ): Promise<WritePlan> {
    const byPeriod = new Map<Repository<T>, Partial<T>[]>();
    for (const item of items) {
      const period = this.#periodOf(item);
      byPeriod.set(period, [...(byPeriod.get(period) ?? []), item]);
    }
    const plans: WritePlan[] = [];
    for (const [period, group] of byPeriod) plans.push(await period.explainBulk(operation, group, options));
    return inSequence(plans);
  }

  /** The period repository of an item of a bulk write (routing checks the period field first). */
  #periodOf(item: unknown): Repository<T> {
    return this.#route(item) as Repository<T>;
  }
}
