import type { EntityModel } from "../../schema/entity-model.js";
import type { Backoff, Clock, Requests, Scoped, TableNaming } from "../core/requests.js";
import { remoteSummariesOf, sourceOf } from "./remote-summaries.js";
import { SummaryIntents, summaryIntentAge } from "./summary-intents.js";
import { mirrorLocal } from "./summary-repairer.js";

/** What the `summaries` kind of `db.repair` did. */
export interface SummaryRepairCounts {
  /** Intents finished and removed. */
  replayed: number;
  /** Contribution rows written (the crashed write had not mirrored its partition). */
  mirrored: number;
  /** Contribution rows found up to date already. */
  alreadyDone: number;
  /** Intents younger than `minIntentAgeMs`, left alone. */
  skipped: number;
  /** Intents of classes this context has not seen (their summaries derive from the class). */
  unknownTypes: number;
  /** Intents whose replay failed (retried by the next pass). */
  failed: number;
}

/**
 * Mirrors the source partition of every pending remote-summary intent (its local rows, as they are
 * now, into their contribution rows) and removes the intent. Replays need no claim: a mirror writes
 * absolute values only if newer, so two repairers (or a repairer and the writer) replaying one intent
 * leave the same rows.
 */
export async function repairSummaryIntents(
  runner: Requests & TableNaming & Scoped & Clock & Backoff,
  modelOf: (table: string, type: string) => EntityModel | undefined,
  minIntentAgeMs: number,
  errors: unknown[],
): Promise<SummaryRepairCounts> {
  const counts: SummaryRepairCounts = {
    replayed: 0,
    mirrored: 0,
    alreadyDone: 0,
    skipped: 0,
    unknownTypes: 0,
    failed: 0,
  };
  const intents = new SummaryIntents(runner);
  for await (const intent of intents.pending()) {
    // Writers date intents by the context's clock (the runner's): aged by the same one.
    if (summaryIntentAge(intent, runner.now()) < minIntentAgeMs) {
      counts.skipped++;
      continue;
    }
    const model = modelOf(intent.table, intent.type);
    if (model === undefined) {
      counts.unknownTypes++;
      continue;
    }
    try {
      // The source's table: the entity's, or the period's the source names.
      const { table } = sourceOf(model, runner, intent.sourcePartitionKey);
      for (const summary of remoteSummariesOf(model)) {
        const wrote = await mirrorLocal(model, runner, table, intent.sourcePartitionKey, summary);
        if (wrote) counts.mirrored++;
        else counts.alreadyDone++;
      }
      await intents.complete(intent);
      counts.replayed++;
    } catch (error) {
      counts.failed++;
      errors.push(error);
    }
  }
  return counts;
}
