import { ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { BlobInfo } from "../../store/table-store.js";
import type { Backend, Requests } from "../core/requests.js";
import { containerOf, ownerOf, parseReference } from "./large-reference.js";
import { assertBlobStore, blobsOf, largeColumnsOf } from "./large-values.js";

/** Options of `repairLargeValues`. */
export interface LargeValueRepairOptions {
  /**
   * Leave blobs younger than this alone (default 0). A write uploads its blob before its row, so a
   * blob of a write still in flight is unreferenced for a moment: while repairs run beside live
   * writers, give the longest write time (retries included) here.
   */
  minIntentAgeMs?: number | undefined;
  /** The clock (tests); default `Date.now`. */
  now?: (() => number) | undefined;
  /**
   * Blobs kept though no row points at them yet, as `<container>/<blob name>`: those of recorded
   * writes still to be replayed (a `db.eventually` intent uploads its values before its steps run).
   */
  held?: ReadonlySet<string> | undefined;
}

/** What `repairLargeValues` found and changed. */
export interface LargeValueRepairResult {
  /** Blobs of the entity's containers old enough to judge. */
  blobsChecked: number;
  /** Blobs no row pointed at, removed. */
  blobsDeleted: number;
}

/**
 * Removes the blobs of an entity class's large columns that no row points at: what a crash or a
 * failure between a write's requests leaves (large-values.ts). For each table, it lists the
 * table's container (one request per 5,000 blobs) and, per entity owning blobs old enough, reads
 * the row's references (one point read); a blob is removed only when the row is gone or points at
 * another blob for that column. Names tablekit did not write are left alone. `tables`: the entity's
 * physical tables (one, or every period's).
 */
export async function repairLargeValues(
  model: EntityModel,
  runner: Requests & Backend,
  tables: readonly string[],
  options: LargeValueRepairOptions = {},
): Promise<LargeValueRepairResult> {
  const result: LargeValueRepairResult = { blobsChecked: 0, blobsDeleted: 0 };
  const minAge = options.minIntentAgeMs ?? 0;
  if (!Number.isSafeInteger(minAge) || minAge < 0) {
    throw new ValidationError(
      "repair-options",
      `minIntentAgeMs must be a non-negative integer, got ${String(minAge)}`,
      { field: "minIntentAgeMs" },
    );
  }
  const columns = largeColumnsOf(model);
  if (columns === undefined) return result;
  assertBlobStore(model, runner.backend);
  const properties = columns.map((c) => c.property);
  const now = options.now ?? Date.now;
  for (const table of tables) {
    const container = containerOf(table);
    let continuation: string | undefined;
    do {
      const page = await runner.run("listBlobs", table, (s) =>
        blobsOf(s).list(container, continuation === undefined ? {} : { continuation }),
      );
      // Taken after the listing: a blob created since is younger than that, so never judged too old.
      const cutoff = now() - minAge;
      const byOwner = new Map<string, BlobInfo[]>();
      for (const blob of page.items) {
        if (blob.createdOn.getTime() > cutoff) continue;
        const owner = ownerOf(blob.name);
        if (owner === undefined || !properties.includes(owner.property)) continue;
        const key = JSON.stringify([owner.partitionKey, owner.rowKey]);
        byOwner.set(key, [...(byOwner.get(key) ?? []), blob]);
      }
      for (const [key, blobs] of byOwner) {
        const [partitionKey, rowKey] = JSON.parse(key) as [string, string];
        result.blobsChecked += blobs.length;
        // Read after the listing: a row that points at one of these blobs now keeps it.
        const stored = await runner.run("get", table, (s) =>
          s.getEntity(table, partitionKey, rowKey, properties).catch((error: unknown) => {
            // A dropped table (a period's) points at nothing.
            if ((error as { statusCode?: number }).statusCode === 404) return undefined;
            throw error;
          }),
        );
        const referenced = new Set(properties.map((p) => parseReference(stored?.[p])));
        for (const blob of blobs) {
          if (referenced.has(blob.name) || options.held?.has(`${container}/${blob.name}`)) continue;
          const deleted = await runner.run("deleteBlob", table, (s) =>
            blobsOf(s).delete(container, blob.name),
          );
          if (deleted) result.blobsDeleted++;
        }
      }
      continuation = page.continuation;
    } while (continuation !== undefined);
  }
  return result;
}
