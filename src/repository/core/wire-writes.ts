import { ConcurrencyError, EntityAlreadyExistsError, EntityNotFoundError } from "../../errors.js";
import type { WireEntity, WriteMode, WriteResult } from "../../store/table-store.js";
import { deleteExisted, ourEtag, settleLostAnswer } from "./lost-answers.js";
import type { Requests } from "./requests.js";

/**
 * Single-entity writes of wire entities, each one request with the lost-answer rules applied.
 * Typed plain writes and `db.dynamic` rows both go through these, so the rules exist once.
 */

/** Inserts; a retry that meets its own applied attempt succeeds, any other taken key is marked unknown. */
export async function insertWire(runner: Requests, table: string, wire: WireEntity): Promise<string> {
  const { etag } = await runner.run("insert", table, async (s, { possiblyApplied }) => {
    try {
      return await s.insert(table, wire);
    } catch (error) {
      // Not ours after all: the key is taken (whether our lost attempt was first cannot be known).
      return settleLostAnswer(error, possiblyApplied, {
        ownEffect: (e) => e instanceof EntityAlreadyExistsError,
        readBack: () => ourEtag(s, table, wire, "replace"),
        otherwise: "mark",
      });
    }
  });
  return etag;
}

/**
 * InsertOrReplace / InsertOrMerge: unconditional and idempotent, so a lost answer needs no read-back.
 * Resolves to the store's result as it is (no `then` of its own: the caller reads the ETag in its own).
 */
export function upsertWire(
  runner: Requests,
  table: string,
  wire: WireEntity,
  mode: WriteMode,
): Promise<WriteResult> {
  return runner.run("upsert", table, (s) => s.upsert(table, wire, mode));
}

/** Conditional replace or merge of an existing entity. */
export async function updateWire(
  runner: Requests,
  table: string,
  wire: WireEntity,
  mode: WriteMode,
  ifMatch: string,
): Promise<string> {
  const keys = { table, partitionKey: wire.partitionKey, rowKey: wire.rowKey };
  const { etag } = await runner.run("update", table, async (s, { possiblyApplied }) => {
    try {
      return await s.update(table, wire, mode, ifMatch);
    } catch (error) {
      // Our earlier attempt may have applied and changed the ETag (412), or applied and been deleted since (404).
      return settleLostAnswer(error, possiblyApplied, {
        ownEffect: (e) => e instanceof ConcurrencyError || e instanceof EntityNotFoundError,
        readBack: () => ourEtag(s, table, wire, mode),
        otherwise: keys,
      });
    }
  });
  return etag;
}

/** Deletes (conditional on `ifMatch`, `*` for any version); resolves whether the entity existed. */
export function deleteWire(
  runner: Requests,
  table: string,
  partitionKey: string,
  rowKey: string,
  ifMatch: string,
): Promise<boolean> {
  return runner.run("delete", table, async (s, { possiblyApplied }) => {
    try {
      return deleteExisted(await s.delete(table, partitionKey, rowKey, ifMatch), possiblyApplied);
    } catch (error) {
      return settleLostAnswer(error, possiblyApplied, {
        ownEffect: (e) => e instanceof EntityNotFoundError || e instanceof ConcurrencyError,
        readBack: async () => ((await s.getEntity(table, partitionKey, rowKey)) ? undefined : true),
        otherwise: { table, partitionKey, rowKey },
      });
    }
  });
}
