import type { EntityModel } from "../../schema/entity-model.js";

/**
 * What a class keeps besides its own row, as the write paths ask it: one place for each question, so
 * that "no indexes means no copies" is decided once.
 */

/**
 * Whether entities of the class have copies: only a class with indexes does. Its rows carry the list
 * of their copies (`withCopyRefs`); a class without indexes has none, and its rows no list (the
 * property budget keeps no room for one).
 */
export function keepsCopies(model: EntityModel<object>): boolean {
  return model.indexes.size > 0;
}

/** Whether a write of the class depends on what is stored: the copies it replaces, or its summaries' deltas. */
export function dependsOnStored(model: EntityModel<object>): boolean {
  return model.indexes.size > 0 || model.summaries.size > 0;
}

/** Whether the class is written as one plain row: no copies, no summaries, not split into wide rows. */
export function isPlainRow(model: EntityModel<object>): boolean {
  return !model.wide && !dependsOnStored(model);
}

/**
 * How a plan names the read of what is stored before a write: its copies, for a class that keeps them,
 * else its row (a summary's delta is computed from it). A wide entity's rows are one range query.
 */
export function readOfStored(model: EntityModel<object>): string {
  const what = keepsCopies(model) ? "current copies" : model.wide ? "stored rows" : "stored row";
  return `${model.wide ? "query" : "get"} (${what})`;
}
