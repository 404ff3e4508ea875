import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  ValidationError,
} from "../../errors.js";
import { isOutcomeUnknown } from "../core/lost-answers.js";
import type { EntityKey, MutateOptions } from "./repository-options.js";

/** What `mutate` uses of its repository. */
export interface MutateOps<T> {
  get(key: Partial<T>): Promise<T | undefined>;
  keyOf(entity: Partial<T>): EntityKey;
  insert(entity: T): Promise<T>;
  update(entity: T, ifMatch: string): Promise<T>;
  etagOf(entity: T): string | undefined;
}

/**
 * `Repository.mutate`: read, apply, write conditional on the ETag read; on a lost race read again
 * and re-apply, up to `attempts` times. An outcome that may have applied is never re-applied.
 */
export async function mutateLoop<T>(
  name: string,
  table: string,
  key: Partial<T>,
  change: (entity: T) => unknown,
  options: MutateOptions<T>,
  ops: MutateOps<T>,
): Promise<T | undefined> {
  const attempts = options.attempts ?? 10;
  if (!Number.isSafeInteger(attempts) || attempts < 1) {
    throw new ValidationError("attempts", `attempts must be a positive integer, got ${attempts}`, {
      field: "attempts",
    });
  }
  let lastConflict: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const current = await ops.get(key);
    const base = current ?? options.create?.();
    if (base === undefined) return undefined;
    // The change may edit the entity in place or return a replacement; any other result is ignored.
    const returned = await change(base);
    const next = (returned !== null && typeof returned === "object" ? returned : base) as T;
    const before = ops.keyOf(base);
    const after = ops.keyOf(next);
    if (before.partitionKey !== after.partitionKey || before.rowKey !== after.rowKey) {
      throw new ValidationError(
        "mutate-key",
        `${name}: mutate() cannot change key fields (that would be another entity); insert the new one and delete the old`,
      );
    }
    try {
      if (current === undefined) return await ops.insert(next);
      return await ops.update(next, ops.etagOf(current) as string);
    } catch (error) {
      // Our own earlier attempt may have been applied: re-applying could count it twice.
      if (isOutcomeUnknown(error)) {
        if (error instanceof ConcurrencyError) throw error;
        throw new ConcurrencyError({ table, ...after }, { cause: error, outcomeUnknown: true });
      }
      // Lost a race (changed, deleted or created meanwhile): read again and re-apply.
      const conflict =
        error instanceof ConcurrencyError ||
        error instanceof EntityNotFoundError ||
        error instanceof EntityAlreadyExistsError;
      if (!conflict) throw error;
      lastConflict = error;
    }
  }
  throw lastConflict;
}
