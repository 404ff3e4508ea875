/**
 * Comparing a write's plan (`explainWrite`, `explainTransaction`, `explainBulk`, `explainEventually`)
 * with the requests it then sends, recorded by a `RecordingStore`: shared by the plan-vs-sent suites.
 */
import { expect } from "vitest";
import type { WriteStep } from "../../src/index.js";
import type { RecordingStore } from "../support/recording-store.js";

/** The store request a step of a plan stands for. */
export function methodOf(step: WriteStep): string {
  const { request } = step;
  if (step.phase === "commit") {
    if (request === "transaction") return "submitTransaction";
    // A patch without `ifMatch` is the service's InsertOrMerge: the store's upsert in merge mode.
    return request === "merge" ? "upsert" : request;
  }
  if (request.startsWith("get")) return "getEntity";
  // A wide entity's rows are read as one range query.
  if (request.startsWith("query")) return "queryPage";
  if (request.startsWith("putBlob")) return "putBlob";
  if (request.startsWith("deleteBlob")) return "deleteBlob";
  // An intent is recorded with an upsert (its id is random: a retry must not fail on its own row).
  if (request === "insert intent" || request === "insert summary intent") return "upsert";
  if (request.startsWith("claim") || request.startsWith("insert")) return "insert";
  if (request.startsWith("upsert")) return "upsert";
  // A unique value's copy after the commit: a replace conditional on its claim's (or its read) ETag.
  if (request.startsWith("replace")) return "update";
  if (request.startsWith("delete")) return "delete";
  return request;
}

/**
 * The requests sent are the plan's, step for step: a run of steps of one `group` (sent in parallel)
 * is compared as a multiset, everything else in order; each `$batch` holds its commit step's operations.
 */
export function expectSentAsPlanned(store: RecordingStore, steps: readonly WriteStep[], what: string): void {
  const segments: string[][] = [];
  steps.forEach((step, i) => {
    const request = `${methodOf(step)} ${step.table}`;
    const last = segments.at(-1);
    if (last && step.group !== undefined && steps[i - 1]?.group === step.group) last.push(request);
    else segments.push([request]);
  });
  const sent = store.sent.map((c) => `${c.method} ${c.table}`);
  let at = 0;
  const received = segments.map((segment) => {
    const part = sent.slice(at, at + segment.length).sort();
    at += segment.length;
    return part;
  });
  if (at < sent.length) received.push(sent.slice(at));
  const detail = `${what}: sent ${JSON.stringify(sent)} for the plan ${JSON.stringify(steps)}`;
  expect(received, detail).toEqual(segments.map((segment) => [...segment].sort()));
  // Only an entity group transaction is a `$batch` (a single-row commit lists its one operation too).
  const commits = steps.filter((s) => s.phase === "commit" && s.request === "transaction");
  const grouped = commits.some((s) => s.group !== undefined);
  const counts = commits.map((s) => s.operations?.length);
  // Batches sent in parallel finish in any order.
  expect(grouped ? [...store.batches].sort() : store.batches, detail).toEqual(
    grouped ? counts.sort() : counts,
  );
}

/** Explains a write (which sends nothing), sends it, and checks the requests sent are the plan's (`expectSentAsPlanned`). */
export async function expectSentAsExplained(
  store: RecordingStore,
  explain: () => Promise<{ steps: WriteStep[] }>,
  write: () => Promise<unknown>,
  what: string,
): Promise<WriteStep[]> {
  store.sent.length = 0;
  store.batches.length = 0;
  const { steps } = await explain();
  expect(store.sent, "explaining sends nothing").toEqual([]);
  await write();
  expectSentAsPlanned(store, steps, what);
  return steps;
}
