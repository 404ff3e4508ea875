import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  StoreError,
  UniqueConstraintError,
  ValidationError,
} from "../../errors.js";
import type { ColumnModel, EntityModel } from "../../schema/entity-model.js";
import { decodeLargeValue, encodeLargeValue } from "../../serialization/large-value-codec.js";
import { createValueReader } from "../../serialization/value-codecs.js";
import type { BlobStore, StoredEntity, TableStore, WireEntity } from "../../store/table-store.js";
import { withSystemProperties } from "../../wire/system-properties.js";
import { isOutcomeUnknown } from "../core/lost-answers.js";
import type { Backend, BlobSealing, Requests } from "../core/requests.js";
import { readWide } from "../core/wide-reads.js";
import {
  type BlobSealer,
  blobKeysMissing,
  type SealedBlobOwner,
} from "../pipeline/encryption/blob-sealing.js";
import { containerOf, formatReference, newBlobName, parseReference } from "./large-reference.js";

/** Blob downloads in flight at once while a page of entities is completed. */
export const LARGE_READ_CONCURRENCY = 8;

/** One value to upload before the row is written. */
export interface Upload {
  /** The column's field, for a write's plan. */
  readonly field: string;
  readonly name: string;
  readonly bytes: Uint8Array;
  /** For an encrypted column: whose value it is (its bytes are sealed before the upload). */
  readonly sealed?: SealedBlobOwner;
}

/** A value of an entity just read that is still to be downloaded. */
interface PendingValue {
  readonly column: ColumnModel;
  readonly blob: string;
  /** For an encrypted column: whose value it is (its bytes are opened after the download). */
  readonly sealed?: SealedBlobOwner;
}

/**
 * A blob a row pointed at is gone: the row was replaced or deleted after it was read (reads then read
 * it again), or something outside tablekit removed the blob. A `StoreError` 404 `BlobNotFound`.
 */
export class LargeValueMissing extends StoreError {
  constructor(container: string, blob: string) {
    super(
      `BlobNotFound: the large value '${container}/${blob}' a row pointed at is gone (the entity changed while it was read, or the blob was removed)`,
      { statusCode: 404, serviceCode: "BlobNotFound" },
    );
  }
}

/** The large columns of an entity class, or `undefined` when it has none. */
export function largeColumnsOf(model: EntityModel): ColumnModel[] | undefined {
  const large = model.columns.filter((c) => c.large);
  return large.length > 0 ? large : undefined;
}

/** The large columns of an entity class in one physical table, as data (what `prepareUploads` needs). */
export interface LargeColumns {
  /** The entity class's name, for errors. */
  readonly model: string;
  readonly columns: readonly ColumnModel[];
  readonly table: string;
}

/**
 * Encodes the entity's large values (a `ValidationError` before any request), points `wire` at new
 * blob names for them, and returns what to upload. `canSeal`: the context has keys (an encrypted
 * column's value is refused without them). Pure: no request.
 */
export function prepareUploads(
  large: LargeColumns,
  entity: object,
  wire: WireEntity,
  canSeal: boolean,
): Upload[] {
  const uploads: Upload[] = [];
  const values = entity as Record<string, unknown>;
  for (const column of large.columns) {
    const value = values[column.field];
    if (value === undefined || value === null) continue;
    const bytes = encodeLargeValue(column, value);
    const name = newBlobName({
      partitionKey: wire.partitionKey,
      rowKey: wire.rowKey,
      property: column.property,
    });
    (wire as Record<string, unknown>)[column.property] = formatReference(bytes.byteLength, name);
    if (!column.encrypted) {
      uploads.push({ field: column.field, name, bytes });
      continue;
    }
    // Sealed before the upload (the row's reference is sealed by the encrypting store): refused here without keys.
    if (!canSeal) throw blobKeysMissing(large.model, column.field);
    const sealed = sealedOwner(large.table, column, name, wire.partitionKey, wire.rowKey);
    uploads.push({ field: column.field, name, bytes, sealed });
  }
  return uploads;
}

/** Whose value a blob of an encrypted column holds: the column of the row with these keys. */
function sealedOwner(
  table: string,
  column: ColumnModel,
  blob: string,
  partitionKey: string,
  rowKey: string,
): SealedBlobOwner {
  return { table, blob, property: column.property, column: column.field, partitionKey, rowKey };
}

/** Refuses an entity with large columns on a store without blobs, before any request. */
export function assertBlobStore(model: EntityModel, store: Pick<TableStore, "name" | "blobs">): void {
  const large = largeColumnsOf(model);
  if (large === undefined || store.blobs !== undefined) return;
  throw blobStoreMissing(model.name, large, store.name);
}

/** The `ValidationError` of an entity with large columns on a store without blobs. */
export function blobStoreMissing(
  model: string,
  large: readonly ColumnModel[],
  store: string,
): ValidationError {
  return new ValidationError(
    "no-blob-store",
    `${model} has large columns (${large.map((c) => c.field).join(", ")}), but the store '${store}' has no blob endpoint: use a connection string with BlobEndpoint (or UseDevelopmentStorage=true), AzureStore's blobEndpoint option, or a MemoryStore`,
  );
}

/** Refuses a write path that cannot carry large values (bulk writes, transactions). */
export function assertNoLargeColumns(model: EntityModel, what: string): void {
  if (largeColumnsOf(model) !== undefined) throw largeUnsupported(model, what);
}

/** The `ValidationError` of a write path that cannot carry large values. */
export function largeUnsupported(model: EntityModel, what: string): ValidationError {
  const fields = model.columns.filter((c) => c.large).map((c) => c.field);
  return new ValidationError(
    "large-unsupported",
    `${model.name} has large columns (${fields.join(", ")}): ${what} cannot carry them; write such entities one at a time (insert, upsert, update, patch, delete)`,
  );
}

/**
 * The large columns of one entity class in one physical table: the blob half of each write and read.
 *
 * Writes: blob first, then the row, then the old blob. Each write uploads its values under fresh
 * names (large-reference.ts) and only then writes the row pointing at them; once the row has
 * committed, the blobs the row pointed at before (found by a point read of the references before
 * the write) are removed. A crash or a failure between those requests leaves at worst a blob no row
 * points at, which `repairLargeValues` removes; a row never points at a blob that was not fully
 * written, and no blob a committed row points at is removed by its own writer.
 *
 * Reads: the mapper leaves large columns out; `hydrated` notes the references of an entity just
 * read, and `complete` downloads them (`LARGE_READ_CONCURRENCY` at a time over a whole page).
 */
export class LargeValues {
  readonly columns: readonly ColumnModel[];
  readonly container: string;
  /** The physical table of the rows. */
  readonly table: string;
  readonly #runner: Requests & BlobSealing;
  readonly #properties: string[];
  /** A wide entity's references may be in any of its rows: they are read assembled (one range query). */
  readonly wide: boolean;
  readonly #pending = new WeakMap<object, PendingValue[]>();
  readonly #model: string;

  constructor(
    model: EntityModel,
    columns: readonly ColumnModel[],
    table: string,
    runner: Requests & Backend & BlobSealing,
  ) {
    assertBlobStore(model, runner.backend);
    this.#model = model.name;
    this.columns = columns;
    this.container = containerOf(table);
    this.table = table;
    this.#runner = runner;
    this.#properties = columns.map((c) => c.property);
    this.wide = model.wide;
  }

  /**
   * Encodes the entity's large values (a `ValidationError` before any request), points `wire` at
   * new blob names for them, and returns what to upload (`prepareUploads`).
   */
  prepare(entity: object, wire: WireEntity): Upload[] {
    const columns = { model: this.#model, columns: this.columns, table: this.table };
    return prepareUploads(columns, entity, wire, this.#runner.blobSealer !== undefined);
  }

  /** Uploads the values (in parallel: one entity has few large columns). */
  async upload(uploads: readonly Upload[]): Promise<void> {
    await Promise.all(
      uploads.map(async (u) => {
        const bytes = u.sealed === undefined ? u.bytes : await this.#sealer().seal(u.sealed, u.bytes);
        await this.#runner.run("putBlob", this.table, (s) => blobsOf(s).put(this.container, u.name, bytes));
      }),
    );
  }

  /** The sealer of encrypted large values (present: `prepare` refused them without keys). */
  #sealer(): BlobSealer {
    const sealer = this.#runner.blobSealer;
    if (sealer === undefined) throw blobKeysMissing(this.#model, "large");
    return sealer;
  }

  /** Whose value a blob of an encrypted column holds: the column of the row with these keys. */
  #owner(column: ColumnModel, blob: string, partitionKey: string, rowKey: string): SealedBlobOwner {
    return sealedOwner(this.table, column, blob, partitionKey, rowKey);
  }

  /** The blobs the stored row points at now, by property (one point read of the references). */
  async current(partitionKey: string, rowKey: string): Promise<Map<string, string>> {
    const table = this.table;
    const stored = this.wide
      ? await readWide(this.#runner, table, partitionKey, rowKey, this.#properties)
      : await this.#runner.run("get", table, (s) =>
          // With the keys and type: an encrypted column's reference opens only bound to its row.
          s.getEntity(table, partitionKey, rowKey, withSystemProperties(this.#properties)),
        );
    const blobs = new Map<string, string>();
    for (const property of this.#properties) {
      const blob = parseReference(stored?.[property]);
      if (blob !== undefined) blobs.set(property, blob);
    }
    return blobs;
  }

  /**
   * `db.reencrypt`: the blobs of the row's encrypted columns sealed under a key other than the current
   * one, opened and sealed again under it, each written back under its own name (the seal is bound to
   * the name, and a blob PUT replaces it whole: a reader gets either version, and both open while the
   * resolver still unwraps the old key). A blob replaced by a concurrent write is gone (left alone) or
   * written back unreferenced (repair removes it). Resolves how many were re-sealed.
   */
  async resealStale(partitionKey: string, rowKey: string): Promise<number> {
    const encrypted = this.columns.filter((column) => column.encrypted);
    if (encrypted.length === 0) return 0;
    const sealer = this.#sealer();
    const references = await this.current(partitionKey, rowKey);
    let resealed = 0;
    for (const column of encrypted) {
      const name = references.get(column.property);
      if (name === undefined) continue;
      const bytes = await this.#runner.run("getBlob", this.table, (s) =>
        blobsOf(s).get(this.container, name),
      );
      if (bytes === undefined || sealer.keyIdOf(bytes) === sealer.currentKeyId) continue;
      const owner = this.#owner(column, name, partitionKey, rowKey);
      const sealed = await sealer.seal(owner, await sealer.open(owner, bytes));
      await this.#runner.run("putBlob", this.table, (s) => blobsOf(s).put(this.container, name, sealed));
      resealed++;
    }
    return resealed;
  }

  /**
   * After the row write failed: when nothing was written (a definite rejection), its new blobs are
   * removed now; when the write may have applied, they are left for repair, which keeps referenced ones.
   */
  async discard(uploads: readonly Upload[], error: unknown): Promise<void> {
    if (!rejected(error)) return;
    await this.remove(uploads.map((u) => u.name));
  }

  /**
   * After the row committed: removes the blobs it no longer points at. `replace` writes every
   * property (absent ones are dropped), `merge` only those in `wire`, so only those lose their old blob.
   */
  async replaced(
    before: ReadonlyMap<string, string>,
    wire: WireEntity | undefined,
    merge: boolean,
  ): Promise<void> {
    const stale: string[] = [];
    for (const [property, blob] of before) {
      const now =
        wire === undefined ? undefined : parseReference((wire as Record<string, unknown>)[property]);
      if (now === blob) continue;
      if (merge && now === undefined) continue;
      stale.push(blob);
    }
    await this.remove(stale);
  }

  /** Deletes blobs, best effort: one that cannot be removed now is an unreferenced blob for repair. */
  async remove(names: readonly string[]): Promise<void> {
    await Promise.all(
      names.map(async (name) => {
        try {
          await this.#runner.run("deleteBlob", this.table, (s) => blobsOf(s).delete(this.container, name));
        } catch {
          // The row no longer points at it: leaving it costs storage, never data; repair removes it.
        }
      }),
    );
  }

  /** Notes the large values of an entity just mapped from `stored`; `complete` fetches them. */
  hydrated(entity: object, stored: StoredEntity): void {
    let pending: PendingValue[] | undefined;
    for (const column of this.columns) {
      const value = stored[column.property];
      if (value === undefined || value === null) continue;
      const blob = parseReference(value);
      if (blob === undefined) {
        // A row written before the column became large keeps its value inline.
        (entity as Record<string, unknown>)[column.field] = createValueReader(
          column.type,
          column.field,
          column.jsonClass,
        )(value);
        continue;
      }
      pending ??= [];
      // Without keys, an encrypted column's reference stays sealed in the row (never parsed here).
      const sealed = column.encrypted
        ? this.#owner(column, blob, stored.partitionKey, stored.rowKey)
        : undefined;
      pending.push(sealed === undefined ? { column, blob } : { column, blob, sealed });
    }
    if (pending !== undefined) this.#pending.set(entity, pending);
  }

  /**
   * Downloads the noted values of these entities, `LARGE_READ_CONCURRENCY` at a time, and sets them.
   * `LargeValueMissing` when a blob is gone (the row was replaced or deleted since it was read).
   */
  async complete(entities: readonly object[]): Promise<void> {
    const work: Array<{ entity: object; value: PendingValue }> = [];
    for (const entity of entities) {
      const pending = this.#pending.get(entity);
      if (pending === undefined) continue;
      for (const value of pending) work.push({ entity, value });
    }
    let next = 0;
    let failed = false;
    const worker = async (): Promise<void> => {
      while (!failed && next < work.length) {
        const { entity, value } = work[next++] as { entity: object; value: PendingValue };
        try {
          const bytes = await this.#runner.run("getBlob", this.table, (s) =>
            blobsOf(s).get(this.container, value.blob),
          );
          if (bytes === undefined) throw new LargeValueMissing(this.container, value.blob);
          const plain = value.sealed === undefined ? bytes : await this.#sealer().open(value.sealed, bytes);
          (entity as Record<string, unknown>)[value.column.field] = decodeLargeValue(value.column, plain);
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(LARGE_READ_CONCURRENCY, work.length) }, worker));
    // Only now: after a failure every entity can be completed again.
    for (const entity of entities) this.#pending.delete(entity);
  }
}

/** The store's blobs (checked when the `LargeValues` was built, so always present here). */
export function blobsOf(store: TableStore): BlobStore {
  const blobs = store.blobs;
  if (blobs === undefined) {
    throw new ValidationError("no-blob-store", `the store '${store.name}' has no blob endpoint`);
  }
  return blobs;
}

/** A failure after which the row is certainly unchanged. */
function rejected(error: unknown): boolean {
  if (isOutcomeUnknown(error)) return false;
  if (
    error instanceof EntityAlreadyExistsError ||
    error instanceof EntityNotFoundError ||
    error instanceof ConcurrencyError ||
    error instanceof ValidationError ||
    // A unique value taken: the claim is refused before the row is written (intent-protocol.ts).
    error instanceof UniqueConstraintError
  ) {
    return true;
  }
  // 4xx answers (but timeouts and throttling, whose request may still run) are rejections too.
  if (!(error instanceof StoreError) || error.statusCode === undefined) return false;
  return (
    error.statusCode >= 400 && error.statusCode < 500 && error.statusCode !== 408 && error.statusCode !== 429
  );
}
