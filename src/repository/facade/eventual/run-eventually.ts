import { type EventualStepConflict, EventualStepError, ValidationError } from "../../../errors.js";
import type { EntityModel } from "../../../schema/entity-model.js";
import type { TransactionAction, WireEntity } from "../../../store/table-store.js";
import { isPlainRow } from "../../core/entity-features.js";
import type { Backend, BlobSealing, Limited, Requests, TableNaming } from "../../core/requests.js";
import { LargeValues, largeColumnsOf } from "../../large/large-values.js";
import { assertWithinLimits } from "../../pipeline/backend-limits.js";
import type { EncryptingStore } from "../../pipeline/encryption/encrypting-store.js";
import type { Repository } from "../repository.js";
import { applyStep, type StepOutcome } from "./apply-step.js";
import { readEntityRow } from "./entity-row.js";
import { type EventualIntent, EventualLog, intentShard, payloadOf } from "./eventual-log.js";
import { type EventualWork, eventualPlan, plannedSteps, runEventualPlan } from "./eventual-plan.js";
import type { EventualTransaction, PlannedStep } from "./eventual-transaction.js";
import type { RecordedStep } from "./recorded-step.js";
import { encodeWire } from "./wire-json.js";

/** What `db.eventually` did: one outcome per step, in the callback's order. */
export interface EventualResult {
  /** `applied`, `alreadyDone` (found applied by an earlier attempt), `absent` (a delete with nothing to delete) or `superseded`. */
  outcomes: StepOutcome[];
}

/** A class the context knows: its model and its repository. */
export interface KnownClass {
  repository: Repository<object>;
  model: EntityModel<object>;
}

/** What running and replaying eventual transactions needs from the context. */
export interface EventualDeps {
  runner: Requests & TableNaming & Limited & Backend & BlobSealing;
  /** Seals and opens encrypted columns (steps are recorded sealed). */
  encryption: EncryptingStore;
  /** The repository of a class by its logical table and type, if the context knows (or, given the model, registers) it. */
  repositoryOf(table: string, type: string, model?: EntityModel<object>): KnownClass | undefined;
  now(): number;
}

/** A stand-in ETag as long as any real one: the payload's size is checked before the versions are read. */
const PLACEHOLDER_ETAG = `W/"datetime'${"0".repeat(40)}'"`;

/**
 * Runs an eventually consistent transaction: validate the whole set (no request), then run its plan
 * (`eventualPlan`): read the versions that steps without a tracked ETag are conditional on, upload
 * large values, record the set as one intent; apply each step idempotently in order; remove the intent. A conflict refuses only its own step:
 * the others are rolled forward, the intent is removed, and the call rejects with
 * `EventualStepError`. Any other failure (a fault, an unknown outcome) rejects with that error and
 * leaves the intent, which `db.repair()` finishes.
 */
export async function runEventually(deps: EventualDeps, tx: EventualTransaction): Promise<EventualResult> {
  const steps = tx.steps;
  if (steps.length === 0)
    throw new ValidationError("eventual-empty", "an eventual transaction needs at least one step");
  const { runner } = deps;
  for (const step of steps) {
    // A wide entity's rows are checked as rows (its repository splits it).
    if (step.model.wide) continue;
    // Stricter backends (the Cosmos DB Table API) have their own key and property limits.
    const { partitionKey, rowKey } = step.wire;
    const action: TransactionAction =
      step.op === "delete"
        ? { kind: "delete", partitionKey, rowKey, ifMatch: "*" }
        : { kind: "upsert", entity: step.wire, mode: step.mode };
    assertWithinLimits(
      runner.limits,
      action,
      `eventual step ${step.index} (${step.op} ${step.model.name}, PartitionKey '${partitionKey}', RowKey '${rowKey}')`,
    );
  }
  for (const step of steps) deps.repositoryOf(step.model.table, step.model.type, step.model);
  // Large values are encoded now (a ValidationError sends nothing) and recorded as references to
  // blobs uploaded before the intent: a replay points the row at the very same blobs.
  const large = steps.map((step) => prepareLarge(runner, step));
  // Encrypted columns are recorded sealed for their target rows: the log never holds them in clear.
  const logged = await Promise.all(
    steps.map((step, i) => deps.encryption.sealCopy(step.physicalTable, large[i]?.wire ?? step.wire)),
  );
  const recorded = steps.map((step, i) => record(step, PLACEHOLDER_ETAG, logged[i]));
  payloadOf(recorded);
  // Upserts and deletes without a tracked ETag (and updates with "*") are conditional on the version
  // read before the intent (a step of the plan); the others' condition is known now.
  for (const [i, step] of steps.entries()) {
    if (step.op === "insert") recorded[i] = record(step, null, logged[i]);
    else if (step.ifMatch !== undefined) recorded[i] = record(step, step.ifMatch, logged[i]);
  }
  const log = new EventualLog(runner);
  const place = { table: log.table, partitionKey: intentShard() };
  let intent: EventualIntent | undefined;
  const work: EventualWork<{ outcomes: StepOutcome[]; conflicts: EventualStepConflict[] }> = {
    async read(i) {
      const step = steps[i] as PlannedStep;
      const stored = await readEntityRow(runner, step.model, step.physicalTable, step.wire);
      recorded[i] = record(step, stored?.etag ?? null, logged[i]);
    },
    // Uploaded before the intent: a crash in between leaves blobs no row or intent points at (repair removes them).
    upload: async () => void (await Promise.all(large.map((w) => w?.values.upload(w.uploads)))),
    async record() {
      intent = await log.record(payloadOf(recorded), recorded, deps.now(), place.partitionKey);
    },
    async apply() {
      const outcomes: StepOutcome[] = [];
      const conflicts: EventualStepConflict[] = [];
      for (const [i, step] of steps.entries()) {
        const model = step.model;
        const known = deps.repositoryOf(model.table, model.type, model);
        const result = await applyStep(
          { runner, encryption: deps.encryption, repository: known, live: true, source: step.source },
          recorded[i] as RecordedStep,
          i,
        );
        if ("conflict" in result) conflicts.push(result.conflict);
        else outcomes.push(result.outcome);
      }
      return { outcomes, conflicts };
    },
    async complete() {
      try {
        await log.complete(intent as EventualIntent);
      } catch {
        // Every step is applied: a removal that failed leaves an intent whose replay finds each step done.
      }
    },
  };
  const planned = plannedSteps(steps, (i) => large[i]?.uploads.map((upload) => upload.field) ?? []);
  // No before-step is abandoned: after the intent, a failure (a fault, an unknown outcome) leaves it for repair.
  const { outcomes, conflicts } = await runEventualPlan(eventualPlan(place, planned, false), work);
  const [first, ...rest] = conflicts;
  if (first) throw new EventualStepError([first, ...rest]);
  return { outcomes };
}

function record(step: PlannedStep, expect: string | null, wire: WireEntity | undefined): RecordedStep {
  return {
    op: step.op,
    table: step.model.table,
    type: step.model.type,
    at: step.physicalTable,
    // Summaries too: their rows change with each write, which only the class's repository does.
    // Wide entities too: their rows are split and replaced by their repository.
    // Large columns too: the replaced blobs are removed by their repository's large stage.
    indexed: !isPlainRow(step.model) || largeColumnsOf(step.model) !== undefined,
    mode: step.mode,
    expect,
    wire: encodeWire(wire ?? step.wire),
  };
}

/** The row of a step that writes large values, pointed at fresh blob names, and what to upload there. */
function prepareLarge(
  runner: Requests & Backend & BlobSealing,
  step: PlannedStep,
): { values: LargeValues; wire: WireEntity; uploads: ReturnType<LargeValues["prepare"]> } | undefined {
  const columns = largeColumnsOf(step.model);
  if (columns === undefined || step.op === "delete") return undefined;
  const values = new LargeValues(step.model, columns, step.physicalTable, runner);
  const wire = { ...step.wire };
  return { values, wire, uploads: values.prepare(step.source, wire) };
}
