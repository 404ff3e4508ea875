import type { WireEntity } from "../../store/table-store.js";
import type { CopyRef } from "../core/copy-ref.js";
import { type EntityLayout, entityLayout } from "../core/entity-layout.js";
import type { GroupCompanion } from "../core/group-companion.js";
import { type PlanExecutor, type PlanStep, stagePart } from "../core/write-plan.js";
import { planEntityDelete } from "./entity-delete-plan.js";
import { type EntityPlan, type EntityPlanning, planEntityGroup, planEntityWrite } from "./entity-plan.js";
import { submitEntityTransaction } from "./entity-transaction.js";
import type { Existing, IndexedTarget, Prior } from "./indexed-target.js";
import { RemoteProtocolRun } from "./remote-protocol-run.js";

/** What a single entity write resolves: the entity's new ETag and the copies it now has. */
export interface EntityWritten {
  etag: string;
  refs: readonly CopyRef[];
}

/** An entity plan and the stage (its summaries) whose part it describes: the executor runs one with the other. */
export interface PlannedEntityWrite {
  plan: EntityPlan;
  companion: GroupCompanion | undefined;
}

const DONE = Promise.resolve();

/**
 * The executor of one entity write's plan (`planEntityWrite`, `planEntityDelete`): each remote step
 * sent by the write's `RemoteProtocolRun`, each stage step by its companion, the commit (with its
 * rounds) by `submitEntityTransaction`. It holds what the steps share: the protocol's run, the ETag
 * committed (the version its copies are stamped with).
 */
export class EntityPlanRun implements PlanExecutor<PlanStep, EntityWritten> {
  readonly #target: IndexedTarget;
  readonly #layout: EntityLayout;
  readonly #plan: EntityPlan;
  readonly #companion: GroupCompanion | undefined;
  readonly #remote: RemoteProtocolRun | undefined;
  #etag = "";

  constructor(target: IndexedTarget, { plan, companion }: PlannedEntityWrite) {
    this.#target = target;
    this.#layout = target.layout ?? entityLayout(target.model, target.runner, target.table);
    this.#plan = plan;
    this.#companion = companion;
    // What the commit left: the version committed, none after a delete.
    const left = plan.deletes ? () => undefined : () => this.#etag;
    this.#remote = plan.protocol && new RemoteProtocolRun(target, plan.row, plan.protocol, left);
  }

  run(step: PlanStep): Promise<void> {
    const action = step.action;
    if (action === undefined) return DONE;
    switch (action.kind) {
      case "remote": {
        const protocol = this.#plan.protocol;
        const remote = protocol?.[action.phase][action.at];
        if (remote === undefined) throw new Error(`no remote step ${action.phase} ${action.at} in the plan`);
        return (this.#remote as RemoteProtocolRun).run(remote);
      }
      case "stage":
        return (action.phase === "before" ? this.#companion?.before?.() : this.#companion?.after?.()) ?? DONE;
      default:
        throw new Error(`an entity plan has no '${action.kind}' step`);
    }
  }

  /** The intent recorded undoes the write's remote work; the stage's before-step undoes its own. */
  abandon(step: PlanStep, error: unknown): Promise<void> {
    const action = step.action;
    if (action?.kind === "remote" && action.phase === "before") {
      const first = this.#plan.protocol?.before[action.at];
      if (first?.kind === "insert intent") return (this.#remote as RemoteProtocolRun).abandon(error);
    }
    if (action?.kind === "stage" && action.phase === "before")
      return this.#companion?.abandon?.(error) ?? DONE;
    return DONE;
  }

  async commit(): Promise<EntityWritten> {
    const { model, runner, table } = this.#target;
    const { partitionKey, actions, localLists, refs, own } = this.#plan.commit;
    this.#etag = await submitEntityTransaction(
      model,
      runner,
      table,
      partitionKey,
      actions,
      localLists,
      refs,
      { layout: this.#layout, count: own.count, rowKey: own.rowKey },
      this.#companion,
    );
    return { etag: this.#etag, refs };
  }
}

/** What `target`'s plans are made from (its store stays with the executor). */
export function entityPlanning(target: IndexedTarget): EntityPlanning {
  const { model, table, runner } = target;
  return {
    model,
    table,
    naming: runner,
    layout: target.layout ?? entityLayout(model, runner, table),
    reserved: target.companions?.reserved ?? 0,
  };
}

/**
 * Plans one entity write: the rows of its transaction (`planEntityGroup`, checked against one
 * transaction's limits), the stage made for the row it computes, then the plan. `operation` names the
 * entity's action in an explained write.
 */
export function planWrite(
  target: IndexedTarget,
  planning: EntityPlanning,
  wire: WireEntity,
  prior: Prior | undefined,
  ifMatch: string | undefined,
  operation?: string,
): PlannedEntityWrite {
  const group = planEntityGroup(planning, wire, prior, ifMatch);
  const companion = target.companions?.companion({
    partitionKey: wire.partitionKey,
    rowKey: wire.rowKey,
    condition: ifMatch,
    before: prior?.exists ? prior.row : undefined,
    after: group.row,
  });
  const plan = planEntityWrite(planning, group, prior, companion && stagePart(companion), operation);
  return { plan, companion };
}

/** Plans one entity delete (see `planEntityDelete`), with the stage made for it. */
export function planDelete(
  target: IndexedTarget,
  planning: EntityPlanning,
  partitionKey: string,
  rowKey: string,
  prior: Existing | undefined,
): PlannedEntityWrite {
  const companion = target.companions?.companion({
    partitionKey,
    rowKey,
    condition: prior?.etag ?? "*",
    before: prior?.row,
    after: undefined,
  });
  const plan = planEntityDelete(planning, partitionKey, rowKey, prior, companion && stagePart(companion));
  return { plan, companion };
}
