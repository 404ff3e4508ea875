import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity } from "../../store/table-store.js";
import type { CopyRef } from "../core/copy-ref.js";
import type { EntityLayout } from "../core/entity-layout.js";
import type { CompanionSource } from "../core/group-companion.js";
import type { IntentLog } from "../core/intent-log.js";
import type { Backoff, Limited, PeriodTableLookup, Requests, TableNaming } from "../core/requests.js";

/** What is stored now for an entity, as far as its copies are concerned (and the row itself, when it was read). */
export type Existing = { exists: true; etag: string; refs: readonly CopyRef[]; row?: StoredEntity };
/** The entity as stored before a write: absent, or its version and copies. */
export type Prior = { exists: false } | Existing;

/** Where an indexed write goes: the entity's model and table, the runner, the intent log, and rows riding along (summaries). */
export interface IndexedTarget {
  model: EntityModel<object>;
  table: string;
  runner: Requests & TableNaming & Backoff & PeriodTableLookup & Limited;
  intents: IntentLog;
  companions?: CompanionSource | undefined;
  /** How the entity lies in its table, when the writer built it once (else each plan builds it). */
  layout?: EntityLayout | undefined;
}
