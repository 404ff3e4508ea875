import { ValidationError } from "../../../errors.js";

/**
 * Client-side pacing of a `TableContext`, in entities per second (the service's scalability targets
 * are 2,000 per partition and 20,000 per account). A batch counts its operations, a query page the
 * rows it returns, any other request one; see the README's "Pacing" for the ramp and the back-off.
 */
export interface ThroughputOptions {
  /** Entities per second per (table, PartitionKey); absent means no per-partition limit. */
  perPartition?: number | undefined;
  /** Entities per second for the whole context; absent means no context-wide limit. */
  perAccount?: number | undefined;
}

/** Validated limits: each absent or a positive finite number. */
export interface ThroughputLimits {
  perPartition: number | undefined;
  perAccount: number | undefined;
}

/** Checks the limits at construction; a bad limit is a `ValidationError` before any request. */
export function readThroughput(options: ThroughputOptions): ThroughputLimits {
  if (typeof options !== "object" || options === null) {
    throw new ValidationError(
      "throughput",
      `throughput must be an object { perPartition?, perAccount? }, got ${String(options)}`,
      { field: "throughput" },
    );
  }
  return {
    perPartition: readLimit(options.perPartition, "throughput.perPartition"),
    perAccount: readLimit(options.perAccount, "throughput.perAccount"),
  };
}

function readLimit(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  // Infinity is no limit at all: leave the limit out instead.
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new ValidationError(
      "throughput",
      `${field} must be a positive, finite number of entities per second (leave it out for no limit), got ${String(value)}`,
      { field },
    );
  }
  return value;
}
