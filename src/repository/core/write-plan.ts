import type {
  CompanionSource,
  GroupCompanion,
  PlanOperation,
  StageDescription,
  StepTarget,
} from "./group-companion.js";

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

/**
 * What a step does, as data (its executor binds each kind to what it sends): a request of the
 * remote-copy protocol (`at`: its index in `RemoteProtocol.before` or `after`), the companion stage's
 * before- or after-work, or a large-value stage's reads, uploads or removals.
 */
export type StepAction =
  | { readonly kind: "remote"; readonly phase: "before" | "after"; readonly at: number }
  | { readonly kind: "stage"; readonly phase: "before" | "after" }
  | { readonly kind: "large references" | "large uploads" | "large removals" };

/**
 * One step before or after the commit: the request it renders as and, when it sends something itself,
 * what it does (`action`). A step without one is rendered only: its request is sent by another step
 * or by the commit's rounds (a companion's reads, the 2nd..nth blob of one upload).
 */
export interface PlanStep extends StepTarget {
  readonly action?: StepAction | undefined;
}

/** The commit: one entity group transaction (or one request), with its operations as rendered. */
export interface PlanCommit extends StepTarget {
  operations: PlanOperation[];
}

/**
 * The plan of one write: steps before the commit (uploads, intents, claims, the reads it needs), one
 * commit in the entity's partition, steps after it (copies elsewhere, removed blobs and intents). Data
 * only: the same value is run (`runPlan`, by an executor) and rendered (`renderPlan`, for `explainWrite`).
 */
export interface WritePlan {
  before: PlanStep[];
  commit: PlanCommit;
  after: PlanStep[];
}

/**
 * What runs a plan's steps (`runPlan`): each step's request(s), the undoing of a before-step that ran
 * when the write fails, and the commit. Executors, not plans, hold the stores and the state the steps
 * share (the intent recorded, the claims' ETags, the references read).
 */
export interface PlanExecutor<S, R> {
  run(step: S): Promise<void>;
  /** The write failed after `step` ran: undoes what it did, where the error says that is safe. */
  abandon?(step: S, error: unknown): Promise<void>;
  commit(): Promise<R>;
}

/**
 * A plan as explained: a write plan, or only the reads a write makes before it finds nothing to
 * write (a delete or patch of an entity the assumed state says is absent).
 */
export type ExplainedPlan = WritePlan | ReadsOnly;

/** The reads a write makes before it answers without a commit. */
export interface ReadsOnly {
  before: PlanStep[];
  commit?: undefined;
  after: PlanStep[];
}

/** What `renderPlan` reads of a plan (of any executor's steps): each step's request, the commit. */
export interface RenderablePlan {
  readonly before: readonly StepTarget[];
  readonly commit?: PlanCommit | undefined;
  readonly after: readonly StepTarget[];
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
export function commitOnly(commit: PlanCommit): WritePlan {
  return { before: [], commit, after: [] };
}

/**
 * A plan around another: the outer plan's before-steps first, then the inner plan's (its commit is
 * the outer's), its after-steps, then the outer's. Rendering only: a running outer plan sends the
 * inner write as its commit (the inner write's rounds stay inside it).
 */
export function around(outer: Omit<WritePlan, "commit">, inner: WritePlan): WritePlan;
export function around(outer: Omit<WritePlan, "commit">, inner: ExplainedPlan): ExplainedPlan;
export function around(outer: Omit<WritePlan, "commit">, inner: ExplainedPlan): ExplainedPlan {
  return {
    before: [...outer.before, ...inner.before],
    commit: inner.commit,
    after: [...inner.after, ...outer.after],
  };
}

/**
 * Runs a plan with `executor`: each before-step in order; the commit; each after-step in order. When a
 * before-step or the commit fails, the steps that ran are abandoned, last first, with the error (each
 * decides from it whether undoing is safe: only a definite refusal proves nothing was written), and
 * the error is the write's answer. An after-step's failure is the write's answer too (the steps that
 * keep their own failures for repair catch them).
 */
export async function runPlan<S, R>(
  plan: { readonly before: readonly S[]; readonly after: readonly S[] },
  executor: PlanExecutor<S, R>,
): Promise<R> {
  const { before, after } = plan;
  let ran = 0;
  let result: R;
  try {
    for (; ran < before.length; ran++) await executor.run(before[ran] as S);
    result = await executor.commit();
  } catch (error) {
    if (executor.abandon !== undefined)
      for (let i = ran - 1; i >= 0; i--) await executor.abandon(before[i] as S, error);
    throw error;
  }
  for (const step of after) await executor.run(step);
  return result;
}

/** The plan as `explainWrite` renders it: each step with its phase, the commit with its operations. */
export function renderPlan(plan: RenderablePlan): RenderedPlan {
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
): WritePlan {
  const kind = actionOf(operation);
  return commitOnly({ request: kind, table, partitionKey, rowKey, operations: [{ kind, rowKey }] });
}

/**
 * What a plan knows of a write's stage (`stagePart`): what it describes of itself, whether it does
 * something before or after the commit, the RowKeys of its rows. Data: the stage itself stays with
 * the executor.
 */
export interface StagePart {
  readonly description: StageDescription | undefined;
  readonly before: boolean;
  readonly after: boolean;
  readonly rowKeys: readonly string[];
}

/** A stage as its write's plan sees it. */
export function stagePart(stage: WriteStage): StagePart {
  return {
    description: stage.describe?.(),
    before: stage.before !== undefined || stage.abandon !== undefined,
    after: stage.after !== undefined,
    rowKeys: stage.rowKeys,
  };
}

const STAGE_BEFORE: StepAction = { kind: "stage", phase: "before" };
const STAGE_AFTER: StepAction = { kind: "stage", phase: "after" };

/**
 * A stage's steps and rows, as plan steps: its before-steps (the first runs its `before`), the reads of
 * its first round (sent by the commit, listed before it), its rows in the transaction, its after-steps
 * (the first runs its `after`).
 */
export function stageSteps(stage: StagePart): {
  before: PlanStep[];
  reads: PlanStep[];
  operations: PlanOperation[];
  after: PlanStep[];
} {
  const described = stage.description;
  const before: PlanStep[] = (described?.before ?? []).map((step, i) =>
    i === 0 ? { ...step, action: STAGE_BEFORE } : step,
  );
  if (before.length === 0 && stage.before) before.push({ request: "stage", table: "", action: STAGE_BEFORE });
  const after: PlanStep[] = (described?.after ?? []).map((step, i) =>
    i === 0 ? { ...step, action: STAGE_AFTER } : step,
  );
  if (after.length === 0 && stage.after) after.push({ request: "stage", table: "", action: STAGE_AFTER });
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
