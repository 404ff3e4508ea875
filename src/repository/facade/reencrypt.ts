import { ConcurrencyError, EntityNotFoundError, ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { parsePart } from "../../serialization/wide-rows.js";
import type { StoreContinuation, StoredEntity, WireEntity } from "../../store/table-store.js";
import { COPY_INDEX_PROPERTY, ENTITY_TYPE_PROPERTY } from "../../wire/system-properties.js";
import { isTableNotFound } from "../core/period-tables.js";
import type { Backend, BlobSealing, Requests } from "../core/requests.js";
import { updateWire } from "../core/wire-writes.js";
import { LargeValues, largeColumnsOf } from "../large/large-values.js";
import type { EncryptingStore } from "../pipeline/encryption/encrypting-store.js";

/** Options of `db.reencrypt`. */
export interface ReencryptOptions {
  /** Confirms the table scan: every row of the entity's tables (and index tables) is read. */
  scan: true;
}

/** What `db.reencrypt` did. */
export interface ReencryptResult {
  /** Rows of the entity (and its index copies) read. */
  scanned: number;
  /** Rows rewritten under the current key. */
  reencrypted: number;
  /** Rows changed or deleted by another writer between the read and the rewrite (that write won). */
  skipped: number;
  /** Blobs of encrypted large columns sealed again under the current key (same name, see `resealStale`). */
  blobsResealed: number;
  /**
   * Entities written again so their blind values and index keys are under the current blind-index key:
   * present only while one is being rotated (`encryption.previousBlindIndexKeys`; see rewrite-blind-values.ts).
   */
  blindRewritten?: number;
}

/** `db.reencrypt`'s preconditions: the table scan confirmed, and something encrypted to rewrite. */
export function checkReencrypt(model: EntityModel, options: ReencryptOptions): void {
  if (options?.scan !== true) {
    throw new ValidationError(
      "reencrypt-scan",
      "reencrypt reads every row of the entity's tables: pass { scan: true } to confirm the table scan",
      { field: "scan" },
    );
  }
  if (!model.columns.some((column) => column.encrypted)) {
    throw new ValidationError("reencrypt", `${model.name} has no encrypted columns`);
  }
}

/**
 * Scans the tables and rewrites, under the current key, the encrypted properties of every row of the
 * model that has a value sealed under another key: a Merge of those properties (plus the unchanged
 * `EntityType`, which says how to seal them) conditional on the row's ETag. The blobs of encrypted
 * large columns are sealed on their own: each entity's are re-sealed under the current key too.
 */
export async function reencrypt(
  model: EntityModel,
  runner: Requests & Backend & BlobSealing,
  encryption: EncryptingStore,
  tables: readonly string[],
): Promise<ReencryptResult> {
  const result: ReencryptResult = { scanned: 0, reencrypted: 0, skipped: 0, blobsResealed: 0 };
  // Encrypted large columns keep their bytes in blobs, sealed on their own: each entity's are checked once.
  const columns = largeColumnsOf(model);
  const sealsBlobs = columns?.some((column) => column.encrypted) === true;
  const largeOf = new Map<string, LargeValues>();
  for (const table of tables) {
    let continuation: StoreContinuation | undefined;
    do {
      let page: Awaited<ReturnType<typeof encryption.queryPage>>;
      try {
        page = await runner.run("query", table, (s) =>
          s.queryPage(table, continuation ? { continuation } : {}),
        );
      } catch (error) {
        // An index table never written to may not exist yet: nothing to rewrite there.
        if (isTableNotFound(error)) break;
        throw error;
      }
      for (const row of page.items) {
        const encrypted = encryption.encryptedColumnsOf(table, row);
        if (encrypted?.model !== model) continue;
        result.scanned++;
        const entityRowKey = sealsBlobs ? entityRowKeyOf(row) : undefined;
        if (columns !== undefined && entityRowKey !== undefined) {
          let large = largeOf.get(table);
          if (large === undefined) {
            large = new LargeValues(model, columns, table, runner);
            largeOf.set(table, large);
          }
          result.blobsResealed += await large.resealStale(row.partitionKey, entityRowKey);
        }
        const current = encryption.currentKeyId;
        const stale = [...encryption.keyIdsOf(row)].some((keyId) => keyId !== current);
        if (!stale) continue;
        const wire: WireEntity = { partitionKey: row.partitionKey, rowKey: row.rowKey };
        const tag = row[ENTITY_TYPE_PROPERTY];
        if (typeof tag === "string") wire[ENTITY_TYPE_PROPERTY] = tag;
        for (const column of encrypted.columns) {
          const value = row[column.property];
          if (value !== undefined && value !== null) wire[column.property] = value;
        }
        try {
          await updateWire(runner, table, wire, "merge", row.etag);
          result.reencrypted++;
        } catch (error) {
          if (!(error instanceof ConcurrencyError || error instanceof EntityNotFoundError)) throw error;
          result.skipped++;
        }
      }
      continuation = page.continuation;
    } while (continuation);
  }
  return result;
}

/** The RowKey of the entity a row is (a wide entity's first row), or `undefined` for an index copy or a later part. */
function entityRowKeyOf(row: StoredEntity): string | undefined {
  if (row[COPY_INDEX_PROPERTY] !== undefined) return undefined;
  const part = parsePart(row);
  if (part === undefined) return row.rowKey;
  return part.index === 0 ? part.base : undefined;
}
