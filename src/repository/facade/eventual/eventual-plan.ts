import type { PlanCommit, RenderedPlan, StepTarget } from "../../core/write-plan.js";
import { renderPlan, runPlan } from "../../core/write-plan.js";
import { containerOf } from "../../large/large-reference.js";
import { largeColumnsOf } from "../../large/large-values.js";
import type { PlannedStep, StepOp } from "./eventual-transaction.js";

/** Where an eventual transaction's intent lives: the intents table, its partition (a shard) and, once recorded, its RowKey. */
export interface IntentPlace {
  table: string;
  /** The shard the intent is recorded in; undefined in an explained plan (the run draws it, `intentShard`). */
  partitionKey?: string | undefined;
  rowKey?: string | undefined;
}

/** One step of an eventual transaction as its plan sees it. */
export interface EventualPlanStep {
  op: StepOp;
  /** The physical table and the keys the step writes. */
  table: string;
  partitionKey: string;
  rowKey: string;
  /**
   * How the version the step is conditional on is read before the intent (`get`; a wide entity's
   * rows: `query`); `undefined` when it is known (an insert, a tracked or given ETag, a replay).
   */
  read?: "get" | "query" | undefined;
  /** Its large values, uploaded before the intent: their container and fields (none in a replay). */
  uploads?: { container: string; fields: readonly string[] } | undefined;
}

/** What running the plan does (`runEventualPlan`). */
export interface EventualWork<R> {
  /** Reads the version step `index` is conditional on. */
  read(index: number): Promise<void>;
  /** Uploads every step's large values (together). */
  upload(): Promise<void>;
  /** Records the intent (a live run; a replay's intent exists already). */
  record(): Promise<void>;
  /** Applies the steps in order, each through its class; resolves what they did. */
  apply(): Promise<R>;
  /** Removes the intent. */
  complete(): Promise<void>;
}

/**
 * What a step of the plan asks the executor to do (`EventualWork`): read step `index`'s version,
 * upload the values (the first upload step sends them all), record or remove the intent. `none`: the
 * step's request is sent by an earlier one.
 */
export type EventualAction =
  | { kind: "read"; index: number }
  | { kind: "upload" }
  | { kind: "record" }
  | { kind: "complete" }
  | { kind: "none" };

/** A step of an eventual plan: its request, and the action that sends it. */
export interface EventualStep extends StepTarget {
  readonly action: EventualAction;
}

/** The plan of one eventual transaction: data, rendered by `renderPlan` and run by `runEventualPlan`. */
export interface EventualPlan {
  before: EventualStep[];
  commit: PlanCommit;
  after: EventualStep[];
}

/**
 * The plan of one eventual transaction (`db.eventually`), or of its replay by `db.repair()`
 * (`recorded`: the intent exists, and the versions and uploads it names were settled before it).
 * Before: the versions read, the large values uploaded, the intent recorded; none of them is
 * abandoned: once the intent is recorded, a failure leaves it for repair, and blobs no row or intent
 * points at are removed by the large-value repair. The commit: the steps applied in order, one
 * operation each (its class writes it in its own table and partition, a plan of its own). It is
 * placed at the intent, in the intents table and the intent's partition: the intent is what makes
 * the steps one transaction (repair replays them from it). After: the intent removed.
 */
export function eventualPlan(
  intent: IntentPlace,
  steps: readonly EventualPlanStep[],
  recorded: boolean,
): EventualPlan {
  const before: EventualStep[] = [];
  steps.forEach((step, index) => {
    if (step.read === undefined) return;
    const { table, partitionKey, rowKey } = step;
    before.push({
      request: `${step.read} (version)`,
      table,
      partitionKey,
      rowKey,
      action: { kind: "read", index },
    });
  });
  // One step per value, all sent together by the first (as a single write's uploads).
  let uploads = 0;
  for (const step of steps) {
    for (const field of step.uploads?.fields ?? []) {
      const action: EventualAction = { kind: uploads++ === 0 ? "upload" : "none" };
      before.push({ request: `putBlob (${field})`, table: step.uploads?.container ?? "", action });
    }
  }
  const place = {
    table: intent.table,
    ...(intent.partitionKey === undefined ? {} : { partitionKey: intent.partitionKey }),
    ...(intent.rowKey === undefined ? {} : { rowKey: intent.rowKey }),
  };
  if (!recorded) before.push({ request: "insert intent", ...place, action: { kind: "record" } });
  return {
    before,
    commit: {
      request: "eventual steps",
      ...place,
      operations: steps.map((step) => ({ kind: step.op, rowKey: step.rowKey })),
    },
    after: [{ request: "delete intent", ...place, action: { kind: "complete" } }],
  };
}

/** Runs an eventual plan: each step's action done by `work`, the commit as `work.apply()` (`runPlan`'s order). */
export function runEventualPlan<R>(plan: EventualPlan, work: EventualWork<R>): Promise<R> {
  return runPlan(plan, {
    run: ({ action }: EventualStep): Promise<void> =>
      action.kind === "read" ? work.read(action.index) : action.kind === "none" ? DONE : work[action.kind](),
    commit: () => work.apply(),
  });
}

const DONE = Promise.resolve();

/**
 * The steps of a caller's eventual transaction as its plan sees them; `uploaded`: the fields of step
 * `i` a run uploads (as prepared), else those `LargeValues.prepare` would (each large column with a value).
 */
export function plannedSteps(
  steps: readonly PlannedStep[],
  uploaded?: (i: number) => readonly string[] | undefined,
): EventualPlanStep[] {
  return steps.map((step, i) => {
    const { op, model, physicalTable: table, wire } = step;
    const read = op !== "insert" && step.ifMatch === undefined ? (model.wide ? "query" : "get") : undefined;
    const values = step.source as Record<string, unknown>;
    const fields =
      uploaded?.(i) ??
      (op === "delete"
        ? []
        : (largeColumnsOf(model) ?? []).filter((c) => values[c.field] != null).map((c) => c.field));
    return {
      op,
      table,
      partitionKey: wire.partitionKey,
      rowKey: wire.rowKey,
      read,
      uploads: fields.length === 0 ? undefined : { container: containerOf(table), fields },
    };
  });
}

/**
 * @internal The plan of the eventual transaction `steps` (e.g. `tx.steps` inside the callback of
 * `db.eventually`) as it would run, rendered without sending anything; `intentTable` is the
 * physical intents table (its partition: a shard at random, as when it runs).
 */
export function explainEventually(steps: readonly PlannedStep[], intentTable: string): RenderedPlan {
  return renderPlan(eventualPlan({ table: intentTable }, plannedSteps(steps), false));
}
