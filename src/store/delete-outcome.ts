import { EntityNotFoundError } from "../errors.js";

/**
 * The port's `delete` outcome (table-store.ts): `true` once the delete request succeeds, `false` when
 * the entity did not exist (the service's 404 ResourceNotFound, which stores raise as
 * `EntityNotFoundError`); any other failure (a 412 `ConcurrencyError`, a missing table) is thrown.
 */
export async function deletedUnlessAbsent(send: () => Promise<unknown>): Promise<boolean> {
  try {
    await send();
    return true;
  } catch (error) {
    if (error instanceof EntityNotFoundError) return false;
    throw error;
  }
}
