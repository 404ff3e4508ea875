import type { CompanionSource, GroupCompanion, PlanOperation, StepTarget } from "./group-companion.js";

export type { PlanOperation, StepTarget } from "./group-companion.js";

/**
 * A stage's part in an entity group transaction: rows planned afresh each round (summary rows, list
 * entities), its steps before and after the commit, how it settles a lost answer and undoes its
 * before-steps. The name the planner uses for `GroupCompanion` (kept for the stages written against it).
 */
export type WriteStage = GroupCompanion;
/** Where a writer gets the stages of each write (the summaries of an indexed or wide entity). */
export type StageSource = CompanionSource;

/** The write operations a plan is explained for (`explainWrite`). */
export type ExplainedOperation = "insert" | "upsert" | "update" | "patch" | "delete";

/**
 * What an explained write may assume is stored (`explainWrite`'s `options.current`): the entity at a
 * row's keys as a read returned it (an entity returned by a read is its own current state), or
 * `undefined`: nothing is stored there. A plan is exact for that state.
 */
export type AssumedState = (partitionKey: string, rowKey: string) => object | undefined;

/** Nothing is assumed stored. */
export const NOTHING_STORED: AssumedState = () => undefined;

/** Where a plan's step sits: before the commit, the commit itself, or after it. */
export type WritePhase = "before" | "commit" | "after";

/** One step before or after the commit. An explained plan has no `run`: nothing is sent. */
export interface PlanStep extends StepTarget {
  /** Sends the step's request(s). */
  readonly run?: (() => Promise<void>) | undefined;
  /** The write failed after this step ran: undoes what it did, where the error says that is safe. */
  readonly abandon?: ((error: unknown) => Promise<void>) | undefined;
}

/** The commit: one entity group transaction (or one request) and how it is sent (with its rounds). */
export interface PlanCommit<R> extends StepTarget {
  operations: PlanOperation[];
  readonly send?: (() => Promise<R>) | undefined;
}

/**
 * The plan of one write: steps before the commit (uploads, intents, claims, the reads it needs), one
 * commit in the entity's partition, steps after it (copies elsewhere, removed blobs and intents). The
 * same value is run (`runPlan`) and rendered (`renderPlan`, for `explainWrite`).
 */
export interface WritePlan<R = void> {
  before: PlanStep[];
  commit: PlanCommit<R>;
  after: PlanStep[];
}

/**
 * A plan as explained: a write plan, or only the reads a write makes before it finds nothing to
 * write (a delete or patch of an entity the assumed state says is absent).
 */
export type ExplainedPlan = WritePlan<unknown> | ReadsOnly;

/** The reads a write makes before it answers without a commit. */
export interface ReadsOnly {
  before: PlanStep[];
  commit?: undefined;
  after: PlanStep[];
}

/** The public form of a plan (API.md `explainWrite`). */
export interface RenderedStep extends StepTarget {
  phase: WritePhase;
  operations?: PlanOperation[];
  /** Steps sent in parallel share a group: in any order among themselves. */
  group?: number;
}

/** The plan of one write as `explainWrite` answers it. */
export interface RenderedPlan {
  steps: RenderedStep[];
}

/** A plan with nothing around its commit. */
export function commitOnly<R>(commit: PlanCommit<R>): WritePlan<R> {
  return { before: [], commit, after: [] };
}

/**
 * A plan around another: the outer plan's before-steps first, then the inner plan's (its commit is
 * the outer's), its after-steps, then the outer's. Rendering only: a running outer plan sends the
 * inner write as its commit (the inner write's rounds stay inside it).
 */
export function around<R>(outer: Omit<WritePlan<unknown>, "commit">, inner: WritePlan<R>): WritePlan<R>;
export function around(outer: Omit<WritePlan<unknown>, "commit">, inner: ExplainedPlan): ExplainedPlan;
export function around(outer: Omit<WritePlan<unknown>, "commit">, inner: ExplainedPlan): ExplainedPlan {
  return {
    before: [...outer.before, ...inner.before],
    commit: inner.commit,
    after: [...inner.after, ...outer.after],
  };
}

/**
 * Runs a plan: each before-step in order; the commit; each after-step in order. When a before-step
 * or the commit fails, the steps that ran are abandoned, last first, with the error (each decides
 * from it whether undoing is safe: only a definite refusal proves nothing was written), and the
 * error is the write's answer. An after-step's failure is the write's answer too (the steps that
 * keep their own failures for repair catch them).
 */
export async function runPlan<R>(plan: WritePlan<R>): Promise<R> {
  const { before, commit, after } = plan;
  let ran = 0;
  let result: R;
  try {
    for (; ran < before.length; ran++) await (before[ran] as PlanStep).run?.();
    result = (await commit.send?.()) as R;
  } catch (error) {
    for (let i = ran - 1; i >= 0; i--) await (before[i] as PlanStep).abandon?.(error);
    throw error;
  }
  for (const step of after) await step.run?.();
  return result;
}

/** The plan as `explainWrite` renders it: each step with its phase, the commit with its operations. */
export function renderPlan(plan: ExplainedPlan): RenderedPlan {
  const step = (phase: WritePhase, { request, table, partitionKey, rowKey }: StepTarget): RenderedStep => ({
    phase,
    request,
    table,
    ...(partitionKey === undefined ? {} : { partitionKey }),
    ...(rowKey === undefined ? {} : { rowKey }),
  });
  return {
    steps: [
      ...plan.before.map((s) => step("before", s)),
      ...(plan.commit === undefined
        ? []
        : [{ ...step("commit", plan.commit), operations: plan.commit.operations.map((o) => ({ ...o })) }]),
      ...plan.after.map((s) => step("after", s)),
    ],
  };
}

/** The entity action a single write sends for `operation` (a patch is a merge). */
export function actionOf(operation: ExplainedOperation): string {
  return operation === "patch" ? "merge" : operation;
}

/** A plan of one request: a single write in the entity's partition. */
export function singleRequest(
  operation: ExplainedOperation,
  table: string,
  partitionKey: string,
  rowKey: string,
): WritePlan<unknown> {
  const kind = actionOf(operation);
  return commitOnly({ request: kind, table, partitionKey, rowKey, operations: [{ kind, rowKey }] });
}

/**
 * A stage's steps and rows, as plan steps: its before-steps, the reads of its first round (sent by the
 * commit, listed before it), its rows in the transaction, its after-steps.
 */
export function stageSteps(stage: WriteStage): {
  before: PlanStep[];
  reads: PlanStep[];
  operations: PlanOperation[];
  after: PlanStep[];
} {
  const described = stage.describe?.();
  const before: PlanStep[] = (described?.before ?? []).map((step, i) =>
    i === 0
      ? {
          ...step,
          run: () => stage.before?.() ?? Promise.resolve(),
          abandon: (error: unknown) => stage.abandon?.(error) ?? Promise.resolve(),
        }
      : step,
  );
  if (before.length === 0 && (stage.before || stage.abandon)) {
    before.push({
      request: "stage",
      table: "",
      run: () => stage.before?.() ?? Promise.resolve(),
      abandon: (error: unknown) => stage.abandon?.(error) ?? Promise.resolve(),
    });
  }
  const after: PlanStep[] = (described?.after ?? []).map((step, i) =>
    i === 0 ? { ...step, run: () => stage.after?.() ?? Promise.resolve() } : step,
  );
  if (after.length === 0 && stage.after)
    after.push({ request: "stage", table: "", run: () => stage.after?.() ?? Promise.resolve() });
  return {
    before,
    reads: described?.reads ?? [],
    operations: described?.operations ?? stage.rowKeys.map((rowKey) => ({ kind: "update", rowKey })),
    after,
  };
}

/** Waits for every one of `work`, then rejects with the first failure, if any (none is left running). */
export async function settleAll(work: readonly Promise<void>[]): Promise<void> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((result) => result.status === "rejected");
  if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
}
