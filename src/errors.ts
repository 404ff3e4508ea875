/** Base class of every error tablekit throws: a stable `code` to branch on and the original `cause`. */
export class TableKitError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A bad entity definition (decorators, key templates, indexes, table names), raised at definition time. */
export class SchemaError extends TableKitError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("SCHEMA", message, options);
  }
}

/** Bad input caught before any request; `field` and `rule` say what was wrong. */
export class ValidationError extends TableKitError {
  readonly field: string | undefined;
  readonly rule: string;

  constructor(rule: string, message: string, details: { field?: string; cause?: unknown } = {}) {
    super("VALIDATION", message, { cause: details.cause });
    this.rule = rule;
    this.field = details.field;
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
  readonly table: string;
  readonly partitionKey: string;
  readonly rowKey: string;

  constructor(keys: EntityKeys, options?: { cause?: unknown }) {
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
  readonly table: string;
  readonly partitionKey: string;
  readonly rowKey: string;

  constructor(keys: EntityKeys, options?: { cause?: unknown }) {
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
  readonly table: string;
  readonly partitionKey: string;
  readonly rowKey: string;
  /**
   * True when an earlier attempt of this write may have been applied (its response was lost) and
   * the entity has changed since: whether this write took effect cannot be known. Do not blindly
   * re-apply a non-idempotent change; read the entity and decide.
   */
  readonly outcomeUnknown: boolean;

  constructor(keys: EntityKeys, options?: { cause?: unknown; outcomeUnknown?: boolean }) {
    super(
      "CONCURRENCY",
      `Entity changed since it was read (ETag mismatch): table ${keys.table}, PartitionKey '${keys.partitionKey}', RowKey '${keys.rowKey}'`,
      options,
    );
    this.table = keys.table;
    this.partitionKey = keys.partitionKey;
    this.rowKey = keys.rowKey;
    this.outcomeUnknown = options?.outcomeUnknown ?? false;
  }
}

/** An entity group transaction was rejected by the store; nothing was written. `index` is the failing operation. */
export class TransactionError extends TableKitError {
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
      rowKey?: string;
      statusCode?: number;
      serviceCode?: string;
      message?: string;
    },
    options?: { cause?: unknown },
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
  readonly statusCode: number | undefined;
  readonly serviceCode: string | undefined;
  /** The service's Retry-After hint, when it sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    details: { statusCode?: number; serviceCode?: string; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super("STORE", message, { cause: details.cause });
    this.statusCode = details.statusCode;
    this.serviceCode = details.serviceCode;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** A unique index already maps this value to another entity (HTTP 409 on the index copy); nothing was written. */
export class UniqueConstraintError extends TableKitError {
  readonly index: string;
  readonly table: string;
  readonly partitionKey: string;
  readonly rowKey: string;

  constructor(details: { index: string } & EntityKeys, options?: { cause?: unknown }) {
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
