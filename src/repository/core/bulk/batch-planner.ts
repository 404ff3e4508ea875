import { ValidationError } from "../../../errors.js";
import type { TransactionAction } from "../../../store/table-store.js";
import { AZURE_TABLE_LIMITS, describeBytes, type StoreLimits } from "../../../util/store-limits.js";
import { assertWithinLimits } from "../../pipeline/backend-limits.js";
import { BATCH_ENVELOPE_BYTES, estimateActionBytes } from "../payload-size.js";
import type { WriteUnit } from "./bulk-types.js";

/**
 * The bytes a planned batch's operations may take: the service's 4 MiB EGT body limit less the
 * `$batch` envelope (`estimateActionBytes` counts each operation's part of the body exactly).
 */
export const BATCH_PAYLOAD_BUDGET = payloadBudget(AZURE_TABLE_LIMITS);

/** The operations' share of a batch body on a backend: its transaction limit less the envelope. */
export function payloadBudget(limits: StoreLimits): number {
  return limits.maxTransactionBytes - BATCH_ENVELOPE_BYTES;
}

/** A closed batch of one partition, ready to submit as one entity group transaction. */
export interface PlannedBatch<T> {
  partitionKey: string;
  units: WriteUnit<T>[];
  actions: TransactionAction[];
  /** The operations' bytes in the `$batch` body (the body is this plus `BATCH_ENVELOPE_BYTES`). */
  bytes: number;
}

interface OpenBatch<T> {
  units: WriteUnit<T>[];
  actions: number;
  bytes: number;
  rowKeys: Set<string>;
}

/**
 * Packs write units into per-partition batches of at most 100 operations and under the payload budget,
 * closing a batch as soon as the next unit cannot join it; batches of a partition close in arrival order.
 */
export class BatchPlanner<T> {
  readonly #open = new Map<string, OpenBatch<T>>();
  /** Partitions by the unit count of their open batch, so the largest is found without scanning them all. */
  readonly #bySize: Set<string>[] = [];
  #bufferedUnits = 0;
  readonly #limits: StoreLimits;
  readonly #budget: number;

  /** Plans batches within a backend's limits (Azure Table storage's by default; 2 MB batches on Cosmos DB). */
  constructor(limits: StoreLimits = AZURE_TABLE_LIMITS) {
    this.#limits = limits;
    this.#budget = payloadBudget(limits);
  }

  /** Units waiting in open (not yet closed) batches. */
  get bufferedUnits(): number {
    return this.#bufferedUnits;
  }

  /**
   * Adds a unit and returns the batches that closed because of it, in submission order; throws
   * `ValidationError` when the unit alone breaks an EGT rule (`position` names it in the message).
   */
  add(unit: WriteUnit<T>, position?: number): PlannedBatch<T>[] {
    const bytes = measureUnit(unit, position, this.#limits);
    const closed: PlannedBatch<T>[] = [];
    let open = this.#open.get(unit.partitionKey);
    if (open && !fits(open, unit, bytes, this.#limits, this.#budget)) {
      closed.push(this.#close(unit.partitionKey, open));
      open = undefined;
    }
    if (!open) {
      open = { units: [], actions: 0, bytes: 0, rowKeys: new Set() };
      this.#open.set(unit.partitionKey, open);
    }
    this.#bySize[open.units.length]?.delete(unit.partitionKey);
    open.units.push(unit);
    this.#sizeBucket(open.units.length).add(unit.partitionKey);
    open.actions += operationsOf(unit);
    open.bytes += bytes;
    for (const rowKey of unit.rowKeys) open.rowKeys.add(rowKey);
    this.#bufferedUnits++;
    // Nothing can join a full batch, so it leaves now rather than waiting for the next unit.
    if (open.actions >= this.#limits.maxTransactionOperations || open.bytes >= this.#budget) {
      closed.push(this.#close(unit.partitionKey, open));
    }
    return closed;
  }

  /** Closes the open batch holding the most units among partitions `eligible` accepts (all by default). */
  closeLargest(eligible: (partitionKey: string) => boolean = () => true): PlannedBatch<T> | undefined {
    for (let size = this.#bySize.length - 1; size > 0; size--) {
      for (const partitionKey of this.#bySize[size] ?? []) {
        if (eligible(partitionKey)) return this.#close(partitionKey, this.#open.get(partitionKey)!);
      }
    }
    return undefined;
  }

  /** Closes every open batch, in the order the partitions were opened. */
  closeAll(): PlannedBatch<T>[] {
    return [...this.#open].map(([partitionKey, open]) => this.#close(partitionKey, open));
  }

  #close(partitionKey: string, open: OpenBatch<T>): PlannedBatch<T> {
    this.#open.delete(partitionKey);
    this.#bySize[open.units.length]?.delete(partitionKey);
    this.#bufferedUnits -= open.units.length;
    return {
      partitionKey,
      units: open.units,
      actions: open.units.flatMap((unit) => unit.actions),
      bytes: open.bytes,
    };
  }

  #sizeBucket(size: number): Set<string> {
    let bucket = this.#bySize[size];
    if (!bucket) {
      bucket = new Set();
      this.#bySize[size] = bucket;
    }
    return bucket;
  }
}

function fits<T>(
  open: OpenBatch<T>,
  unit: WriteUnit<T>,
  bytes: number,
  limits: StoreLimits,
  budget: number,
): boolean {
  if (open.actions + operationsOf(unit) > limits.maxTransactionOperations) return false;
  if (open.bytes + bytes > budget) return false;
  // An EGT may touch each entity once: a second write of a key waits for the next batch, which keeps write order.
  return !unit.rowKeys.some((rowKey) => open.rowKeys.has(rowKey));
}

/** Checks the rules a unit must meet on its own (it can never be split) and returns its estimated payload. */
function measureUnit<T>(unit: WriteUnit<T>, position: number | undefined, limits: StoreLimits): number {
  // The unit's name is only needed for an error message: built lazily, it costs nothing per item.
  const name = () => describeUnit(unit, position);
  const count = operationsOf(unit);
  if (unit.actions.length === 0)
    throw new ValidationError("transaction-empty", `${name()} has no operation to write`);
  if (count > limits.maxTransactionOperations) {
    throw new ValidationError(
      "transaction-operations",
      `${name()} needs ${count} operations (index copies included); a transaction holds at most ${limits.maxTransactionOperations}`,
    );
  }
  let bytes = 0;
  for (const action of unit.actions) {
    const partitionKey = "entity" in action ? action.entity.partitionKey : action.partitionKey;
    if (partitionKey !== unit.partitionKey) {
      throw new ValidationError(
        "transaction-partition",
        `${name()} has an operation in PartitionKey '${partitionKey}'; a transaction spans one partition`,
      );
    }
    assertWithinLimits(limits, action, name);
    bytes += estimateActionBytes(action, limits);
  }
  bytes += unit.extra?.bytes ?? 0;
  if (unit.rowKeys.length > 1 && new Set(unit.rowKeys).size !== unit.rowKeys.length) {
    throw new ValidationError(
      "transaction-duplicate",
      `${name()} touches a RowKey twice; a transaction may touch each entity once`,
    );
  }
  if (bytes > payloadBudget(limits)) {
    throw new ValidationError(
      "transaction-payload",
      `${name()} makes a $batch body of ${bytes + BATCH_ENVELOPE_BYTES} bytes; a transaction's request body may be at most ${describeBytes(limits.maxTransactionBytes)}`,
    );
  }
  return bytes;
}

/** The operations a unit takes in its transaction: its actions and what its plan adds. */
function operationsOf<T>(unit: WriteUnit<T>): number {
  return unit.actions.length + (unit.extra?.operations ?? 0);
}

function describeUnit<T>(unit: WriteUnit<T>, position: number | undefined): string {
  const where = `PartitionKey '${unit.partitionKey}'${unit.rowKeys[0] === undefined ? "" : `, RowKey '${unit.rowKeys[0]}'`}`;
  return position === undefined ? `Bulk item (${where})` : `Bulk item ${position} (${where})`;
}
