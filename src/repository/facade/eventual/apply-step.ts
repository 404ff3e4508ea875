import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  type EventualStepConflict,
  type TableKitError,
  UniqueConstraintError,
} from "../../../errors.js";
import type { EntityModel } from "../../../schema/entity-model.js";
import type { StoredEntity, WireEntity } from "../../../store/table-store.js";
import type { Requests } from "../../core/requests.js";
import { deleteWire, insertWire, updateWire, upsertWire } from "../../core/wire-writes.js";
import { holdsWrittenState } from "../../core/written-state.js";
import { largeColumnsOf } from "../../large/large-values.js";
import type { EncryptingStore } from "../../pipeline/encryption/encrypting-store.js";
import type { Repository } from "../repository.js";
import type { UpdateOptions } from "../repository-options.js";
import { readEntityRow } from "./entity-row.js";
import type { RecordedStep } from "./recorded-step.js";
import { decodeWire } from "./wire-json.js";

/**
 * What a step did: `applied` now; `alreadyDone` (an earlier attempt of this intent applied it: the
 * entity holds exactly what the step writes); `absent` (a delete found nothing to delete);
 * `superseded` (an upsert replayed by repair found a newer write by someone else and left it).
 */
export type StepOutcome = "applied" | "alreadyDone" | "absent" | "superseded";

/** A step refused by a conflict: it was not applied, and nobody else's write was overwritten. */
export type StepResult = { outcome: StepOutcome } | { conflict: EventualStepConflict };

/** Where a step is applied: the class's repository (when known), else the raw table. */
export interface StepTarget {
  runner: Requests;
  /** Opens the step's recorded (sealed) columns. */
  encryption: EncryptingStore;
  /** The repository and model of the step's class, if this context knows it. */
  repository: { repository: Repository<object>; model: EntityModel<object> } | undefined;
  /** First application by the caller (true) or a replay by repair (false). */
  live: boolean;
  /** The caller's instance or key (live only): its tracked ETag follows the write. */
  source?: object | undefined;
}

/**
 * Applies one step idempotently, keeping its single-entity meaning. Every write is conditional on
 * the version recorded in the intent (an ETag, or "absent"), so a replay never overwrites a newer
 * write by someone else; when the condition fails the entity is read, and a step whose effect is
 * already there (same content, merge-compared: index bookkeeping may add properties) is done.
 */
export async function applyStep(target: StepTarget, step: RecordedStep, index: number): Promise<StepResult> {
  // Encrypted columns were recorded sealed (run-eventually.ts): the write seals them afresh.
  const wire = await target.encryption.openCopy(step.at, decodeWire(step.wire));
  const writer = writerOf(target, step, wire);
  const conflict = (error: TableKitError): StepResult => ({
    conflict: {
      index,
      op: step.op,
      table: step.at,
      partitionKey: wire.partitionKey,
      rowKey: wire.rowKey,
      error,
    },
  });
  const ownOrElse = async (error: unknown, otherwise: () => Promise<StepResult>): Promise<StepResult> => {
    if (!isConflict(error)) throw error;
    if (holdsWrittenState(wire, await writer.read(), "merge")) return { outcome: "alreadyDone" };
    return otherwise();
  };
  const upsertFallback = async (error: TableKitError): Promise<StepResult> => {
    // A unique index value held by another entity refuses an upsert as it would a plain one.
    if (error instanceof UniqueConstraintError) return conflict(error);
    // The caller's upsert is last-writer-wins; a replay comes later than any write it finds and leaves it.
    if (!target.live) return { outcome: "superseded" };
    try {
      await writer.upsert(step.mode);
      return { outcome: "applied" };
    } catch (again) {
      if (!isConflict(again)) throw again;
      return conflict(again);
    }
  };

  switch (step.op) {
    case "insert":
      try {
        await writer.insert();
        return { outcome: "applied" };
      } catch (error) {
        return ownOrElse(error, async () => conflict(error as TableKitError));
      }
    case "update":
      try {
        if (step.expect === null) throw new EntityNotFoundError(keysOf(step, wire));
        await writer.update(step.mode, step.expect);
        return { outcome: "applied" };
      } catch (error) {
        return ownOrElse(error, async () => conflict(error as TableKitError));
      }
    case "upsert":
      try {
        if (step.expect === null) await writer.insert();
        else await writer.update(step.mode, step.expect);
        return { outcome: "applied" };
      } catch (error) {
        return ownOrElse(error, () => upsertFallback(error as TableKitError));
      }
    case "delete": {
      if (step.expect === null) return { outcome: "absent" };
      try {
        return { outcome: (await writer.delete(step.expect)) ? "applied" : "absent" };
      } catch (error) {
        if (error instanceof EntityNotFoundError) return { outcome: "absent" };
        if (!isConflict(error)) throw error;
        return conflict(error as TableKitError);
      }
    }
  }
}

/** Refusals that mean "someone else's write is there": anything else (faults) leaves the intent for repair. */
function isConflict(error: unknown): error is TableKitError {
  return (
    error instanceof EntityAlreadyExistsError ||
    error instanceof ConcurrencyError ||
    error instanceof EntityNotFoundError ||
    error instanceof UniqueConstraintError
  );
}

function keysOf(step: RecordedStep, wire: WireEntity) {
  return { table: step.at, partitionKey: wire.partitionKey, rowKey: wire.rowKey };
}

interface StepWriter {
  insert(): Promise<void>;
  update(mode: RecordedStep["mode"], ifMatch: string): Promise<void>;
  upsert(mode: RecordedStep["mode"]): Promise<void>;
  /** Conditional delete; resolves whether the entity existed. */
  delete(ifMatch: string): Promise<boolean>;
  read(): Promise<StoredEntity | undefined>;
}

function writerOf(target: StepTarget, step: RecordedStep, wire: WireEntity): StepWriter {
  const { runner } = target;
  const table = step.at;
  const known = target.repository;
  const read = () =>
    known
      ? readEntityRow(runner, known.model, table, wire)
      : runner.run("get", table, (s) => s.getEntity(table, wire.partitionKey, wire.rowKey));
  if (!known) {
    // A class without indexes replays from its recorded wire form alone.
    return {
      insert: async () => void (await insertWire(runner, table, wire)),
      update: async (mode, ifMatch) => void (await updateWire(runner, table, wire, mode, ifMatch)),
      upsert: async (mode) => void (await upsertWire(runner, table, wire, mode)),
      delete: (ifMatch) => deleteWire(runner, table, wire.partitionKey, wire.rowKey, ifMatch),
      read,
    };
  }
  const { repository, model } = known;
  // The caller's instance when live (its ETag is tracked afterwards), else one rebuilt from the record.
  const instance = () =>
    target.source !== undefined && step.op !== "delete"
      ? target.source
      : model.mapper.fromWire({ ...wire, etag: "" } as StoredEntity);
  // Large values were uploaded before the intent was recorded: live or replayed, the row points at those blobs.
  const large = largeColumnsOf(model) !== undefined;
  const write = (kind: "insert" | "upsert" | "update", options: UpdateOptions = {}) => {
    const entity = instance();
    if (large) return repository.writePrepared(kind, entity, wire, options);
    if (kind === "insert") return repository.insert(entity);
    return kind === "upsert" ? repository.upsert(entity, options) : repository.update(entity, options);
  };
  return {
    insert: async () => void (await write("insert")),
    update: async (mode, ifMatch) => void (await write("update", { mode, ifMatch })),
    upsert: async (mode) => void (await write("upsert", { mode })),
    delete: async (ifMatch) => {
      if (target.source !== undefined) return repository.delete(target.source, { ifMatch });
      // Replay: the class needs the whole entity to find its copies; only the recorded version is deleted.
      const stored = await read();
      if (!stored) return false;
      if (stored.etag !== ifMatch) throw new ConcurrencyError(keysOf(step, wire));
      return repository.delete(model.mapper.fromWire(stored), { ifMatch });
    },
    read,
  };
}
