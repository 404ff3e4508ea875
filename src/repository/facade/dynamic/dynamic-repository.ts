import { ValidationError } from "../../../errors.js";
import { quoteString } from "../../../query/odata.js";
import { etagIn, rememberEtag } from "../../../serialization/entity-etag.js";
import type { WriteMode } from "../../../store/table-store.js";
import { TABLE_NAME } from "../../../util/service-limits.js";
import type { Requests, Scoped, TableNaming } from "../../core/requests.js";
import { deleteWire, insertWire, updateWire, upsertWire } from "../../core/wire-writes.js";
import { writeMode } from "../../core/write-mode.js";
import { DynamicQuery } from "./dynamic-query.js";
import { checkRowKeys, type DynamicRow, rowToWire, storedToRow } from "./dynamic-row.js";

/** Options of a dynamic `upsert`. */
export interface DynamicUpsertOptions {
  /** `replace` (default) drops properties not sent; `merge` keeps them. */
  mode?: WriteMode | undefined;
}

/** Options of a dynamic `update`. */
export interface DynamicUpdateOptions {
  /** `replace` (default) drops properties not sent; `merge` keeps them. */
  mode?: WriteMode | undefined;
  /** The ETag to match; default: the one tracked for the row. `"*"` writes unconditionally. */
  ifMatch?: string | undefined;
}

/** Options of a dynamic `delete`. */
export interface DynamicDeleteOptions {
  /** The ETag to match; default `"*"` (any version). */
  ifMatch?: string | undefined;
}

/**
 * An untyped repository over any table (`db.dynamic(table)`): rows are plain objects
 * `{ partitionKey, rowKey, ...properties }` with typed wire values (see `DynamicRow`). Writes are
 * validated against the service's rules before any request, retried like typed writes, and
 * their ETags tracked (`etagOf(row)`, `timestampOf(row)`).
 * @example
 * const events = db.dynamic("Events");
 * await events.upsert({ partitionKey: "device-7", rowKey: "0001", level: 3, at: new Date() });
 * const row = await events.get("device-7", "0001");
 */
export class DynamicRepository {
  readonly #runner: Requests & Scoped;
  readonly #table: string;

  /** @internal Use `TableContext.dynamic(table)`. */
  static build(runner: Requests & TableNaming & Scoped, table: string): DynamicRepository {
    if (typeof table !== "string") {
      throw new ValidationError("table-name", "dynamic() needs a table name", { field: "table" });
    }
    const physical = runner.tableName(table);
    if (!TABLE_NAME.test(physical) || physical.toLowerCase() === "tables") {
      throw new ValidationError(
        "table-name",
        `'${physical}' is no valid table name: 3-63 letters and digits, starting with a letter, not "tables"`,
        { field: "table" },
      );
    }
    return new DynamicRepository(runner, physical);
  }

  private constructor(runner: Requests & Scoped, table: string) {
    this.#runner = runner;
    this.#table = table;
  }

  /** The physical table (with the context's `tablePrefix`). */
  get table(): string {
    return this.#table;
  }

  /** Creates the table where missing. */
  async ensureTable(): Promise<void> {
    await this.#runner.run("createTable", this.#table, (s) => s.createTable(this.#table));
  }

  /** Point read; `undefined` when absent. */
  async get(partitionKey: string, rowKey: string): Promise<DynamicRow | undefined> {
    checkRowKeys(partitionKey, rowKey);
    const stored = await this.#runner.run("get", this.#table, (s) =>
      s.getEntity(this.#table, partitionKey, rowKey),
    );
    if (!stored) return undefined;
    const row = storedToRow(stored);
    rememberEtag(row, stored.etag, this.#runner.scope);
    return row;
  }

  /** Inserts; `EntityAlreadyExistsError` if the key exists. Resolves to the same row, its ETag tracked. */
  async insert(row: DynamicRow): Promise<DynamicRow> {
    rememberEtag(row, await insertWire(this.#runner, this.#table, rowToWire(row)), this.#runner.scope);
    return row;
  }

  /** Inserts or replaces (default) or merges, without reading first. */
  async upsert(row: DynamicRow, options: DynamicUpsertOptions = {}): Promise<DynamicRow> {
    const { etag } = await upsertWire(this.#runner, this.#table, rowToWire(row), writeMode(options.mode));
    rememberEtag(row, etag, this.#runner.scope);
    return row;
  }

  /**
   * Replaces (default) or merges an existing row, only if unchanged since it was read (its tracked
   * ETag, or `ifMatch`); `ConcurrencyError` otherwise, `EntityNotFoundError` if it is gone.
   */
  async update(row: DynamicRow, options: DynamicUpdateOptions = {}): Promise<DynamicRow> {
    const mode = writeMode(options.mode);
    const wire = rowToWire(row);
    const ifMatch = options.ifMatch ?? etagIn(row, this.#runner.scope);
    if (ifMatch === undefined) {
      throw new ValidationError(
        "etag-required",
        `update needs the row's ETag (read it through this context first) or { ifMatch: "*" } to overwrite unconditionally`,
        { field: "ifMatch" },
      );
    }
    const etag = await updateWire(this.#runner, this.#table, wire, mode, ifMatch);
    rememberEtag(row, etag, this.#runner.scope);
    return row;
  }

  /** Deletes by key, conditional on `ifMatch` when given; resolves whether the row existed. */
  async delete(partitionKey: string, rowKey: string, options: DynamicDeleteOptions = {}): Promise<boolean> {
    checkRowKeys(partitionKey, rowKey);
    return deleteWire(this.#runner, this.#table, partitionKey, rowKey, options.ifMatch ?? "*");
  }

  /** The rows of one partition, in RowKey order. */
  find(partitionKey: string): DynamicQuery {
    checkRowKeys(partitionKey, "");
    return DynamicQuery.build(this.#runner, this.#table, `PartitionKey eq ${quoteString(partitionKey)}`);
  }

  /** Every row of the table: a table scan, which must be asked for explicitly. */
  scan(): DynamicQuery {
    return DynamicQuery.build(this.#runner, this.#table, "");
  }
}
