/** The stable `code` of every tablekit error class (one per class; see the errors table of the README). */
export type TableKitErrorCode =
  | "SCHEMA"
  | "VALIDATION"
  | "ENTITY_NOT_FOUND"
  | "ENTITY_ALREADY_EXISTS"
  | "CONCURRENCY"
  | "TRANSACTION"
  | "STORE"
  | "UNIQUE"
  | "ENCRYPTION"
  | "QUERY_BUDGET"
  | "EVENTUAL_STEP"
  | "PERIOD_DROPPED"
  | "CHANGE_FEED_GAP";

/** Options every error takes: the error that caused it, and whether the failed write may have been applied. */
export interface TableKitErrorOptions {
  cause?: unknown;
  outcomeUnknown?: boolean | undefined;
}

/**
 * Base class of every error tablekit throws: a stable `code` to branch on and the original `cause`.
 * Each subclass narrows `code` to its literal (`ConcurrencyError["code"]` is `"CONCURRENCY"`).
 */
export class TableKitError extends Error {
  readonly code: TableKitErrorCode;
  /**
   * True when the failed write may nevertheless have been applied: an earlier attempt's answer was
   * lost and the stored state cannot tell (it was changed since, or the write is not recognisable).
   * Do not blindly re-apply a non-idempotent change; read the entity and decide. False otherwise.
   */
  readonly outcomeUnknown: boolean;

  constructor(code: TableKitErrorCode, message: string, options?: TableKitErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.outcomeUnknown = options?.outcomeUnknown ?? false;
  }
}

/** A bad entity definition (decorators, key templates, indexes, table names), raised at definition time. */
export class SchemaError extends TableKitError {
  declare readonly code: "SCHEMA";
  constructor(message: string, options?: TableKitErrorOptions) {
    super("SCHEMA", message, options);
  }
}

/**
 * Bad input caught before any request; `field` and `rule` say what was wrong. In a bulk write,
 * `itemIndex` is the bad item's position in the input (from 0), with its `partitionKey` and `rowKey`
 * when they could be encoded.
 */
export class ValidationError extends TableKitError {
  declare readonly code: "VALIDATION";
  readonly field: string | undefined;
  readonly rule: string;
  readonly itemIndex: number | undefined;
  readonly partitionKey: string | undefined;
  readonly rowKey: string | undefined;

  constructor(
    rule: string,
    message: string,
    details: {
      field?: string | undefined;
      cause?: unknown;
      itemIndex?: number | undefined;
      partitionKey?: string | undefined;
      rowKey?: string | undefined;
    } = {},
  ) {
    super("VALIDATION", message, { cause: details.cause });
    this.rule = rule;
    this.field = details.field;
    this.itemIndex = details.itemIndex;
    this.partitionKey = details.partitionKey;
    this.rowKey = details.rowKey;
  }
}

/** Keys of the entity an error is about. */
export interface EntityKeys {
  table: string;
  partitionKey: string;
  rowKey: string;
}

/** The entity did not exist where existence was required (HTTP 404). */
export class EntityNotFoundError extends TableKitError {
  declare readonly code: "ENTITY_NOT_FOUND";
  readonly table: string;
  readonly partitionKey: string;
  readonly rowKey: string;

  constructor(keys: EntityKeys, options?: TableKitErrorOptions) {
    super(
      "ENTITY_NOT_FOUND",
      `Entity not found: table ${keys.table}, PartitionKey '${keys.partitionKey}', RowKey '${keys.rowKey}'`,
      options,
    );
    this.table = keys.table;
    this.partitionKey = keys.partitionKey;
    this.rowKey = keys.rowKey;
  }
}

/** An insert found the key already taken (HTTP 409 EntityAlreadyExists). */
export class EntityAlreadyExistsError extends TableKitError {
  declare readonly code: "ENTITY_ALREADY_EXISTS";
  readonly table: string;
  readonly partitionKey: string;
  readonly rowKey: string;

  constructor(keys: EntityKeys, options?: TableKitErrorOptions) {
    super(
      "ENTITY_ALREADY_EXISTS",
      `Entity already exists: table ${keys.table}, PartitionKey '${keys.partitionKey}', RowKey '${keys.rowKey}'`,
      options,
    );
    this.table = keys.table;
    this.partitionKey = keys.partitionKey;
    this.rowKey = keys.rowKey;
  }
}

/** A conditional write lost a race: the stored ETag no longer matches (HTTP 412). */
export class ConcurrencyError extends TableKitError {
  declare readonly code: "CONCURRENCY";
  readonly table: string;
  readonly partitionKey: string;
  readonly rowKey: string;

  constructor(keys: EntityKeys, options?: TableKitErrorOptions) {
    super(
      "CONCURRENCY",
      `Entity changed since it was read (ETag mismatch): table ${keys.table}, PartitionKey '${keys.partitionKey}', RowKey '${keys.rowKey}'`,
      options,
    );
    this.table = keys.table;
    this.partitionKey = keys.partitionKey;
    this.rowKey = keys.rowKey;
  }
}

/** An entity group transaction was rejected by the store; nothing was written. `index` is the failing operation. */
export class TransactionError extends TableKitError {
  declare readonly code: "TRANSACTION";
  readonly index: number;
  readonly table: string;
  readonly partitionKey: string;
  readonly rowKey: string | undefined;
  readonly statusCode: number | undefined;
  readonly serviceCode: string | undefined;

  constructor(
    details: {
      index: number;
      table: string;
      partitionKey: string;
      rowKey?: string | undefined;
      statusCode?: number | undefined;
      serviceCode?: string | undefined;
      message?: string | undefined;
    },
    options?: TableKitErrorOptions,
  ) {
    super(
      "TRANSACTION",
      `Transaction failed at operation ${details.index} (table ${details.table}, PartitionKey '${details.partitionKey}'` +
        `${details.rowKey === undefined ? "" : `, RowKey '${details.rowKey}'`}): ` +
        `${details.serviceCode ?? "error"}${details.message ? ` - ${details.message}` : ""}. Nothing was written.`,
      options,
    );
    this.index = details.index;
    this.table = details.table;
    this.partitionKey = details.partitionKey;
    this.rowKey = details.rowKey;
    this.statusCode = details.statusCode;
    this.serviceCode = details.serviceCode;
  }
}

/** Any other store failure (after retries); keeps the HTTP status and the service's error code. */
export class StoreError extends TableKitError {
  declare readonly code: "STORE";
  readonly statusCode: number | undefined;
  readonly serviceCode: string | undefined;
  /** The service's Retry-After hint, when it sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    details: {
      statusCode?: number | undefined;
      serviceCode?: string | undefined;
      retryAfterMs?: number | undefined;
      cause?: unknown;
    } = {},
  ) {
    super("STORE", message, { cause: details.cause });
    this.statusCode = details.statusCode;
    this.serviceCode = details.serviceCode;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** A unique index already maps this value to another entity (HTTP 409 on the index copy); nothing was written. */
export class UniqueConstraintError extends TableKitError {
  declare readonly code: "UNIQUE";
  readonly index: string;
  readonly table: string;
  readonly partitionKey: string;
  readonly rowKey: string;

  constructor(details: { index: string } & EntityKeys, options?: TableKitErrorOptions) {
    super(
      "UNIQUE",
      `Unique index ${details.index} already holds this value (table ${details.table}, PartitionKey '${details.partitionKey}', RowKey '${details.rowKey}'); nothing was written`,
      options,
    );
    this.index = details.index;
    this.table = details.table;
    this.partitionKey = details.partitionKey;
    this.rowKey = details.rowKey;
  }
}

/**
 * An encrypted value failed to decrypt or verify (wrong key, unknown key id, or a value moved to
 * another row or column). Names the column and the entity's keys, never the value.
 */
export class EncryptionError extends TableKitError {
  declare readonly code: "ENCRYPTION";
  readonly column: string;
  readonly table: string;
  readonly partitionKey: string;
  readonly rowKey: string;

  constructor(details: { column: string; reason: string } & EntityKeys, options?: TableKitErrorOptions) {
    super(
      "ENCRYPTION",
      `Encrypted column ${details.column} could not be decrypted (table ${details.table}, PartitionKey '${details.partitionKey}', RowKey '${details.rowKey}'): ${details.reason}`,
      options,
    );
    this.column = details.column;
    this.table = details.table;
    this.partitionKey = details.partitionKey;
    this.rowKey = details.rowKey;
  }
}

/**
 * `toArray({ maxRequests })` used up its requests before the end of the results: `items` holds what
 * was read, `continuation` resumes the query with `page({ continuation })`.
 */
export class QueryBudgetError extends TableKitError {
  declare readonly code: "QUERY_BUDGET";
  /** The results read before the budget ran out, in the order `toArray` would have returned them. */
  readonly items: unknown[];
  /** Where the query stopped: pass it to `page({ continuation })` to read on. */
  readonly continuation: string;
  /** Store requests sent (the budget). */
  readonly requests: number;

  constructor(details: { items: unknown[]; continuation: string; requests: number }) {
    super(
      "QUERY_BUDGET",
      `query stopped after its budget of ${details.requests} requests with ${details.items.length} results read and more to read`,
    );
    this.items = details.items;
    this.continuation = details.continuation;
    this.requests = details.requests;
  }
}

/** One step of an eventual transaction that a conflict refused. */
export interface EventualStepConflict {
  /** Position of the step in the `db.eventually` callback, from 0. */
  index: number;
  op: "insert" | "upsert" | "update" | "delete";
  table: string;
  partitionKey: string;
  rowKey: string;
  /** The refusal: `EntityAlreadyExistsError`, `ConcurrencyError`, `EntityNotFoundError` or `UniqueConstraintError`. */
  error: TableKitError;
}

/**
 * A step of `db.eventually` was refused by a conflict (its key taken, its entity changed or gone
 * since it was read): the step is named, every other step was applied (rolled forward), and the
 * intent was removed. `conflicts` lists every refused step; the first is the one in the message.
 */
export class EventualStepError extends TableKitError {
  declare readonly code: "EVENTUAL_STEP";
  readonly index: number;
  readonly op: EventualStepConflict["op"];
  readonly table: string;
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly conflicts: readonly EventualStepConflict[];

  constructor(conflicts: readonly [EventualStepConflict, ...EventualStepConflict[]]) {
    const [first] = conflicts;
    super(
      "EVENTUAL_STEP",
      `Eventual transaction step ${first.index} (${first.op} in table ${first.table}, PartitionKey '${first.partitionKey}', RowKey '${first.rowKey}') was refused: ${first.error.message}` +
        `${conflicts.length > 1 ? ` (and ${conflicts.length - 1} more refused step${conflicts.length > 2 ? "s" : ""})` : ""}. The other steps were applied.`,
      { cause: first.error },
    );
    this.index = first.index;
    this.op = first.op;
    this.table = first.table;
    this.partitionKey = first.partitionKey;
    this.rowKey = first.rowKey;
    this.conflicts = conflicts;
  }
}

/**
 * A write into a period whose table `db.dropTables(Entity, { before })` dropped: the period ends at or
 * before the recorded cut-off (kept in the store, so every process sees it). The table is not
 * re-created; the write changed nothing.
 */
export class PeriodDroppedError extends TableKitError {
  declare readonly code: "PERIOD_DROPPED";
  /** The dropped period's table (physical name). */
  readonly table: string;
  /** The latest `before` of `dropTables` for this entity's tables. */
  readonly cutoff: Date;

  constructor(details: { table: string; cutoff: Date }, options?: TableKitErrorOptions) {
    super(
      "PERIOD_DROPPED",
      `table ${details.table} belongs to a period dropped by dropTables (cut-off ${details.cutoff.toISOString()}): a write into it is refused rather than re-creating the table`,
      options,
    );
    this.table = details.table;
    this.cutoff = details.cutoff;
  }
}

/**
 * A change feed position older than the oldest change still retained in one of its partitions: the
 * changes in between were trimmed (`db.repair()` after the entity's `retentionMs`), so reading on
 * would skip them silently. Start again without `from` (and rebuild what depends on the feed).
 */
export class ChangeFeedGapError extends TableKitError {
  declare readonly code: "CHANGE_FEED_GAP";
  /** The table (physical name) of the partition with the gap. */
  readonly table: string;
  readonly partitionKey: string;
  /** The position's last sequence number in the partition, and the last one trimmed there. */
  readonly after: number;
  readonly trimmed: number;

  constructor(details: { table: string; partitionKey: string; after: number; trimmed: number }) {
    super(
      "CHANGE_FEED_GAP",
      `change feed position is past retention in table ${details.table}, PartitionKey '${details.partitionKey}': it stops at change ${details.after}, but changes up to ${details.trimmed} were trimmed`,
    );
    this.table = details.table;
    this.partitionKey = details.partitionKey;
    this.after = details.after;
    this.trimmed = details.trimmed;
  }
}
