import { createRequire } from "node:module";

// The Reflect metadata polyfill, which legacy decorators' emitted metadata needs before any entity class
// is defined. Through require(): an ES import of its CommonJS file makes Node lex it for named exports,
// a cost on every cold start.
createRequire(typeof __filename === "string" ? __filename : import.meta.url)("reflect-metadata");

import type { TableServer, TableServerOptions } from "./server/table-server.js";

export {
  ChangeFeedGapError,
  ConcurrencyError,
  EncryptionError,
  EntityAlreadyExistsError,
  type EntityKeys,
  EntityNotFoundError,
  type EventualStepConflict,
  EventualStepError,
  PeriodDroppedError,
  QueryBudgetError,
  SchemaError,
  StoreError,
  TableKitError,
  type TableKitErrorCode,
  type TableKitErrorOptions,
  TransactionError,
  UniqueConstraintError,
  ValidationError,
} from "./errors.js";
export { type CommonField, type CommonValues, MultiEntityQuery } from "./query/multi-entity-query.js";
export { type ODataValue, odata } from "./query/odata.js";
export type { ComparisonOperator, Page, PageOptions, ToArrayOptions } from "./query/query.js";
export { Query } from "./query/query.js";
export type { QueryPageStats } from "./query/query-budget.js";
export type { QueryExplanation, QueryKind } from "./query/query-plan.js";
export type {
  BulkOptions,
  BulkProgress,
  BulkResult,
  FailedBatch,
} from "./repository/core/bulk/bulk-types.js";
export type { CopyRef } from "./repository/core/copy-ref.js";
export type { PatchChanges, SeriesSlots } from "./repository/core/patch-changes.js";
export type { RepairCounts, RepairReport } from "./repository/core/repair-kind.js";
export type { RepairWorker, RepairWorkerOptions } from "./repository/core/repair-worker.js";
export type { TableKitEvent, TableKitEventListener } from "./repository/core/table-kit-event.js";
export { DynamicQuery } from "./repository/facade/dynamic/dynamic-query.js";
export {
  type DynamicDeleteOptions,
  DynamicRepository,
  type DynamicUpdateOptions,
  type DynamicUpsertOptions,
} from "./repository/facade/dynamic/dynamic-repository.js";
export type { DynamicRow } from "./repository/facade/dynamic/dynamic-row.js";
export type { StepOutcome } from "./repository/facade/eventual/apply-step.js";
export { EventualTransaction } from "./repository/facade/eventual/eventual-transaction.js";
export type { EventualRepairCounts } from "./repository/facade/eventual/repair-eventual.js";
export type { EventualResult } from "./repository/facade/eventual/run-eventually.js";
export type { EventualBuild } from "./repository/facade/explain-forms.js";
export type {
  ExplainedOperation,
  ExplainOptions,
  WritePlan,
  WriteStep,
} from "./repository/facade/explain-write.js";
export { type EntityOf, MultiEntitySource } from "./repository/facade/multi-entity-source.js";
export type { ReencryptOptions, ReencryptResult } from "./repository/facade/reencrypt.js";
export { Repository } from "./repository/facade/repository.js";
export type {
  DeleteOptions,
  EntityKey,
  GetManyOptions,
  GetOptions,
  MutateOptions,
  PatchOptions,
  UpdateOptions,
  UpsertOptions,
} from "./repository/facade/repository-options.js";
export type { SasOptions, SasPermissions } from "./repository/facade/scoped-sas.js";
export type { SweepOptions, SweepResult } from "./repository/facade/sweep-expired.js";
export {
  type RepairAllOptions,
  TableContext,
  type TableContextOptions,
  type TransactionResult,
} from "./repository/facade/table-context.js";
export { Transaction } from "./repository/facade/transaction.js";
export type {
  Change,
  ChangeFeedConsumeOptions,
  ChangeFeedConsumer,
  ChangeFeedPage,
  ChangeFeedReadOptions,
} from "./repository/feed/change.js";
export type { ChangeFeed } from "./repository/feed/change-feed.js";
export { IndexLookup } from "./repository/index/index-lookup.js";
export type { RepairOptions, RepairResult } from "./repository/index/index-repairer.js";
export type { IndexDrift } from "./repository/index/index-verifier.js";
export type { EncryptionOptions, KeyResolver } from "./repository/pipeline/encryption/key-resolver.js";
export { localKeys } from "./repository/pipeline/encryption/local-keys.js";
export type { PaceChange } from "./repository/pipeline/pacing/pace-bucket.js";
export type { PaceReport } from "./repository/pipeline/pacing/pacer.js";
export type { ThroughputOptions } from "./repository/pipeline/pacing/throughput-options.js";
export type { RetryOptions } from "./repository/pipeline/retry-policy.js";
export type { SummaryValues } from "./repository/summary/summary-row.js";
export type { SummaryDrift } from "./repository/summary/summary-verifier.js";
export { DEFAULT_BLIND_INDEX_BITS, maxSafeBlindIndexBits } from "./schema/blind-index-plan.js";
export type {
  ColumnDecorator,
  ColumnTypeValue,
  ColumnValueOf,
  EntityDecorator,
  EntityKeyFields,
  EntityOptionsFields,
  KeyFieldsMismatch,
  KeyTemplateFields,
  MissingFields,
  TypedEntityDecorator,
  WhenParameters,
  WideConflicts,
} from "./schema/decorator-types.js";
export { Column, Entity } from "./schema/decorators.js";
export type { EntityClass } from "./schema/entity-model.js";
export type {
  BlindIndexOptions,
  ChangeFeedOptions,
  ColumnOptions,
  DateField,
  EntityOptions,
  IndexOptions,
  LargeColumnCheck,
  LargeColumnType,
  SummableField,
  SummaryOptions,
} from "./schema/entity-options.js";
export { type DeclaredKeyFields, KEY_FIELDS, type KeyValues } from "./schema/key-fields.js";
export { etagOf } from "./serialization/entity-etag.js";
export { timestampOf } from "./serialization/entity-timestamp.js";
export type { TableServerOAuth } from "./server/bearer-token.js";
export type { TableServer, TableServerOptions, TableServerTls } from "./server/table-server.js";
export { type AzureCredential, AzureStore, type AzureStoreOptions } from "./store/azure/azure-store.js";
export {
  MemoryStore,
  type MemoryStoreFlavor,
  type MemoryStoreOptions,
  type MemoryStoreStats,
} from "./store/memory/memory-store.js";
export type { PageBreaks } from "./store/memory/query-pager.js";
export {
  type AddShardOptions,
  type ReshardProgress,
  type ReshardResult,
  ShardedStore,
  type ShardedStoreOptions,
} from "./store/sharded/index.js";
export type {
  BlobInfo,
  BlobListOptions,
  BlobPage,
  BlobStore,
  EdmType,
  PropertyTypes,
  StoreCapabilities,
  StoreContinuation,
  StoredEntity,
  StoreLimits,
  StorePage,
  StoreQuery,
  StoreRepairOptions,
  TableSasIssuer,
  TableSasRequest,
  TableStore,
  TransactionAction,
  TypedValue,
  WireEntity,
  WireValue,
  WriteMode,
  WriteResult,
} from "./store/table-store.js";
export type {
  CreateValues,
  DataField,
  RequiredField,
  Selected,
  WhereValues,
} from "./util/entity-fields.js";
export { AZURE_TABLE_LIMITS, COSMOS_TABLE_LIMITS } from "./util/store-limits.js";
export type { ColumnType } from "./wire/column-type.js";

/**
 * Serves a `MemoryStore` over the Azure Table service REST protocol (path-style URLs, SharedKey and
 * SharedKeyLite), so the official SDKs and `AzureStore` can use it as an emulator. The server's code
 * is loaded on the first call, so importing `tablekit` stays light; `tablekit/server` exports the same
 * function.
 *
 * @example
 * ```ts
 * const server = await startTableServer({ port: 0 });
 * const db = new TableContext({ store: AzureStore.fromConnectionString(server.connectionString) });
 * await server.close();
 * ```
 */
export async function startTableServer(options?: TableServerOptions): Promise<TableServer> {
  const server = await import("./server/table-server.js");
  return server.startTableServer(options);
}
