import { ConcurrencyError, EntityNotFoundError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { StoreContinuation, WireEntity } from "../../store/table-store.js";
import { ENTITY_TYPE_PROPERTY } from "../../wire/system-properties.js";
import { isTableNotFound } from "../core/period-tables.js";
import type { Requests } from "../core/requests.js";
import { updateWire } from "../core/wire-writes.js";
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
}

/**
 * Scans the tables and rewrites, under the current key, the encrypted properties of every row of the
 * model that has a value sealed under another key: a Merge of those properties (plus the unchanged
 * `EntityType`, which says how to seal them) conditional on the row's ETag.
 */
export async function reencrypt(
  model: EntityModel,
  runner: Requests,
  encryption: EncryptingStore,
  tables: readonly string[],
): Promise<ReencryptResult> {
  const result: ReencryptResult = { scanned: 0, reencrypted: 0, skipped: 0 };
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
