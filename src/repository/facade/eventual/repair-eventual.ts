import { ValidationError } from "../../../errors.js";
import { MAX_REPLAY_ATTEMPTS } from "../../index/index-repairer.js";
import { containerOf, parseReference } from "../../large/large-reference.js";
import { applyStep } from "./apply-step.js";
import { type EventualIntent, EventualLog, recordedAt } from "./eventual-log.js";
import { type EventualWork, eventualPlan, runEventualPlan } from "./eventual-plan.js";
import type { EventualDeps } from "./run-eventually.js";

/** How long a repairer's claim on an intent keeps other repairers away. */
export const CLAIM_LEASE_MS = 60_000;

/** What one repair pass did to eventual transactions. */
export interface EventualRepairCounts {
  /** Intents finished and removed. */
  replayed: number;
  /** Steps applied by this pass. */
  applied: number;
  /** Steps found applied already (by the crashed writer or an earlier pass). */
  alreadyDone: number;
  /** Steps refused by a conflict (left as the other writer wrote them). */
  conflicts: number;
  /** Steps that found a newer write (upserts) or nothing to delete. */
  superseded: number;
  /** Intents left alone: younger than `minIntentAgeMs`, claimed by another repairer, or claimed first by one. */
  skipped: number;
  /** Intents left because a step's class (one with indexes) is unknown to this context. */
  unknownTypes: number;
  /** Intents whose replay failed (retried by the next pass). */
  failed: number;
  /** Intents set aside after too many failed replays. */
  poisoned: number;
}

/**
 * Replays every unfinished eventual transaction: each intent is claimed first (a conditional
 * update of its row with a lease), so repairers in several processes never replay one intent at
 * once; then its steps are applied idempotently (see `applyStep`) and it is removed.
 */
export async function repairEventual(
  deps: EventualDeps,
  minIntentAgeMs: number,
  errors: unknown[],
  held?: Set<string>,
): Promise<EventualRepairCounts> {
  const counts: EventualRepairCounts = {
    replayed: 0,
    applied: 0,
    alreadyDone: 0,
    conflicts: 0,
    superseded: 0,
    skipped: 0,
    unknownTypes: 0,
    failed: 0,
    poisoned: 0,
  };
  const log = new EventualLog(deps.runner);
  for await (const intent of log.pending()) {
    // Until it is finished, the blobs its steps point at are kept (`held`: see the large-value repair).
    const left = () => {
      for (const blob of blobsOf(intent)) held?.add(blob);
    };
    const now = deps.now();
    if (intent.leaseUntil > now || now - recordedAt(intent) < minIntentAgeMs) {
      counts.skipped++;
      left();
      continue;
    }
    if (intent.steps.some((step) => step.indexed && !deps.repositoryOf(step.table, step.type))) {
      counts.unknownTypes++;
      left();
      continue;
    }
    if (intent.attempts >= MAX_REPLAY_ATTEMPTS) {
      await log.setAside(intent, `failed ${intent.attempts} replays`);
      counts.poisoned++;
      continue;
    }
    const claimed = await log.claim(intent, now + CLAIM_LEASE_MS);
    if (!claimed) {
      counts.skipped++;
      left();
      continue;
    }
    try {
      await replay(deps, log, claimed, counts);
      counts.replayed++;
    } catch (error) {
      // The claim counted an attempt; the lease runs out and a later pass tries again.
      counts.failed++;
      errors.push(error);
      left();
    }
  }
  return counts;
}

/**
 * Replays one claimed intent as the plan of its transaction without what already happened (the
 * versions read, the uploads, the intent recorded): its steps applied in order, then the intent
 * removed, only if no other repairer claimed it since.
 */
async function replay(
  deps: EventualDeps,
  log: EventualLog,
  intent: EventualIntent,
  counts: EventualRepairCounts,
): Promise<void> {
  const place = { table: log.table, partitionKey: intent.partitionKey, rowKey: intent.rowKey };
  const steps = intent.steps.map((step) => ({
    op: step.op,
    table: step.at,
    partitionKey: step.wire.pk,
    rowKey: step.wire.rk,
  }));
  const none = async () => {};
  const work: EventualWork<void> = {
    read: none,
    upload: none,
    record: none,
    async apply() {
      for (const [i, step] of intent.steps.entries()) {
        const known = deps.repositoryOf(step.table, step.type);
        const result = await applyStep(
          { runner: deps.runner, encryption: deps.encryption, repository: known, live: false },
          step,
          i,
        );
        if ("conflict" in result) counts.conflicts++;
        else if (result.outcome === "applied") counts.applied++;
        else if (result.outcome === "alreadyDone") counts.alreadyDone++;
        else counts.superseded++;
      }
    },
    complete: () => log.complete(intent, intent.etag),
  };
  await runEventualPlan(eventualPlan(place, steps, true), work);
}

/** The blobs an intent's steps point at, as `<container>/<blob name>` (large columns are recorded as references). */
function blobsOf(intent: EventualIntent): string[] {
  const blobs: string[] = [];
  for (const step of intent.steps) {
    if (step.op === "delete") continue;
    for (const [, tag, value] of step.wire.p) {
      const blob = tag === "s" ? parseReference(value) : undefined;
      if (blob !== undefined) blobs.push(`${containerOf(step.at)}/${blob}`);
    }
  }
  return blobs;
}

/** Checks `minIntentAgeMs` (a non-negative integer) before any request. */
export function checkMinAge(value: unknown): number {
  const minAge = value ?? 0;
  if (typeof minAge !== "number" || !Number.isSafeInteger(minAge) || minAge < 0) {
    throw new ValidationError(
      "repair-options",
      `minIntentAgeMs must be a non-negative integer, got ${String(minAge)}`,
      { field: "minIntentAgeMs" },
    );
  }
  return minAge;
}
