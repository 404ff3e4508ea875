import { ValidationError } from "../../../errors.js";
import type { EntityModel } from "../../../schema/entity-model.js";
import { INTENTS_TABLE } from "../../core/intent-log.js";
import type { Requests, TableNaming } from "../../core/requests.js";
import type { ExplainedOperation, RenderedStep } from "../../core/write-plan.js";
import { renderPlan } from "../../core/write-plan.js";
import type { ExplainOptions, WritePlan } from "../explain-write.js";
import { eventualPlan, plannedSteps } from "./eventual-plan.js";
import type { EventualTransaction, PlannedStep } from "./eventual-transaction.js";

/** What explaining an eventual transaction needs of the context (a part of `EventualDeps`). */
export interface EventualExplainDeps {
  runner: Requests & TableNaming;
  /** The repository of a step's class, which explains the step's own write. */
  repositoryOf(
    table: string,
    type: string,
    model?: EntityModel<object>,
  ):
    | {
        repository: {
          explainWrite(operation: ExplainedOperation, value: object, options: ExplainOptions): WritePlan;
        };
      }
    | undefined;
}

/**
 * `db.explainEventually`: the plan `runEventually` runs from the state `options.current` gives
 * (`eventualPlan`: the versions read, the uploads and the intent before; the intent removed after),
 * with its commit, the steps applied in order, rendered as each step's own write plan: the write
 * its class's repository makes for it (`applyStep`) — an insert, or a write conditional on the
 * version read (an update, a delete), none for a delete of what is absent — from the same state.
 * A step's large values were uploaded before the intent, so its write uploads none.
 */
export async function explainEventually(
  deps: EventualExplainDeps,
  tx: EventualTransaction,
  assumed: (step: PlannedStep) => object | undefined,
): Promise<WritePlan> {
  const steps = tx.steps;
  if (steps.length === 0)
    throw new ValidationError("eventual-empty", "an eventual transaction needs at least one step");
  // The intent's partition is a shard drawn when the transaction runs (`intentShard`): the plan names
  // its table only, as it does for an index intent, never a shard the run will not use.
  const place = { table: deps.runner.tableName(INTENTS_TABLE) };
  const rendered = renderPlan(eventualPlan(place, plannedSteps(steps), false)).steps;
  const applied = steps.flatMap((step) => stepPlan(deps, step, assumed(step)));
  return {
    steps: [
      ...rendered.filter((s) => s.phase === "before"),
      ...applied,
      ...rendered.filter((s) => s.phase === "after"),
    ],
  };
}

/** The write a step's class makes for it, as its repository explains it (none: a delete of nothing). */
function stepPlan(deps: EventualExplainDeps, step: PlannedStep, stored: object | undefined): RenderedStep[] {
  // The version the step is conditional on: the caller's, or the one read before the intent.
  const exists = step.op !== "insert" && (step.ifMatch !== undefined || stored !== undefined);
  const operation: ExplainedOperation | undefined =
    step.op === "insert"
      ? "insert"
      : step.op === "delete"
        ? exists
          ? "delete"
          : undefined
        : exists
          ? "update"
          : "insert";
  if (operation === undefined) return [];
  if (step.op === "update" && !exists)
    throw new ValidationError(
      "explain",
      `eventual step ${step.index}: an update of an entity assumed absent is refused`,
    );
  const known = deps.repositoryOf(step.model.table, step.model.type, step.model);
  if (known === undefined) return [];
  const current = stored === undefined ? [] : [stored];
  return known.repository
    .explainWrite(operation, step.source, { current })
    .steps.filter((s) => !s.request.startsWith("putBlob") && !(exists && rereadsWideRows(step, s)));
}

/**
 * A wide entity's write conditional on the version read before the intent (its ETag lists every
 * row's) knows the stored rows: it does not read them again, as an unconditional one would.
 */
function rereadsWideRows(step: PlannedStep, planned: RenderedStep): boolean {
  return step.model.wide && planned.phase === "before" && planned.request === "query (stored rows' keys)";
}
