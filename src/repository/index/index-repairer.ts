import type { EntityModel } from "../../schema/entity-model.js";
import type { StoreRunner } from "../store-runner.js";

/** Options of `repairIndexes`. */
export interface RepairOptions {
  /** Also scan and fix every drift `verifyIndexes` would report (cost proportional to the tables). */
  scan?: boolean;
}

/** What `repairIndexes` changed. */
export interface RepairResult {
  /** Unfinished intents replayed and removed. */
  intentsReplayed: number;
  /** Copies written (missing or stale). */
  copiesWritten: number;
  /** Copies deleted (stale keys or orphans). */
  copiesDeleted: number;
  /** Intents set aside after too many failed replays. */
  poisoned: number;
}

/** Replays unfinished index work; with `scan`, also fixes drift. */
export async function repairIndexes<T extends object>(
  model: EntityModel<T>,
  runner: StoreRunner,
  options: RepairOptions,
): Promise<RepairResult> {
  void model;
  void runner;
  void options;
  throw new Error("not implemented yet");
}
