import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Issue 30: no planner holds a store. The pure planners of a transaction are given the `Planning`
 * input (naming, limits, clock, tracked state, blind values, what large values can count on) and the
 * answers of the executor's reads step (`facade/transaction-parts.ts`), never a role that sends a
 * request nor a function that reads. The plan itself (`transactionPlan`) is described from those parts
 * as data: the summary stages' and large values' descriptions are functions of their plain parameters.
 * So are a single write's planners (`planEntityGroup`, `planEntityWrite`, `planEntityDelete`,
 * `planRemoteProtocol`): given `EntityPlanning` and the stage's description, never the writer's target.
 */
const PLANNERS = [
  "repository/facade/transaction-indexes.ts",
  "repository/facade/transaction-operation-expansion.ts",
  "repository/wide/wide-actions.ts",
  "repository/facade/transaction-plan.ts",
  "repository/summary/summary-description.ts",
  "repository/index/entity-plan.ts",
  "repository/index/entity-delete-plan.ts",
  "repository/index/remote-protocol.ts",
];

/**
 * What sends or reads: the request roles, the store port, the readers of stored rows, and the stages
 * that send (their descriptions are the planners', from data).
 */
const SENDERS = new Set([
  "Requests",
  "RequestContext",
  "Backoff",
  "StoreRunner",
  "TableStore",
  "readEntity",
  "readWide",
  "entityLayout",
  "EntityLayout",
  "GroupCompanion",
  "SummaryStage",
  "SummaryCompanion",
  "SummaryCommitter",
  "RemoteSummaries",
  "SummaryIntents",
  "listCompanion",
  "LargeValues",
  "LargeSteps",
  "RemoteProtocolRun",
  "CommitAttempt",
  "IndexedTarget",
  "EntityPlanRun",
  "LargeRun",
]);

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

/** The names a file imports, each with the module it comes from. */
function importedNames(file: string): Array<{ name: string; from: string }> {
  const text = readFileSync(resolve(SRC, file), "utf8");
  return [...text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s+"([^"]+)"/g)].flatMap((match) =>
    (match[1] as string)
      .split(",")
      .map((part) => part.trim().replace(/^type\s+/, ""))
      .filter((name) => name.length > 0)
      .map((name) => ({ name: name.split(/\s+as\s+/)[0] as string, from: match[2] as string })),
  );
}

/** The text of an exported interface's body (its fields and their types). */
function interfaceBody(file: string, name: string): string {
  const text = readFileSync(resolve(SRC, file), "utf8");
  const start = text.indexOf(`export interface ${name} {`);
  expect(start).toBeGreaterThanOrEqual(0);
  return text.slice(start, text.indexOf("\n}", start));
}

/** The data a transaction's plan is described from (`transactionPlan`'s parts). */
const PLAN_INPUTS = [
  ["repository/facade/transaction-parts.ts", "TransactionParts"],
  ["repository/facade/transaction-large.ts", "LargeWrite"],
  ["repository/summary/summary-description.ts", "SummaryStagePlan"],
] as const;

describe("transaction planners", () => {
  it.each(PLANNERS)("%s imports nothing that sends or reads", (file) => {
    const names = importedNames(file);
    // The pattern reads the file's imports at all (a planner imports its roles from core/requests.ts or its model).
    expect(names.length).toBeGreaterThan(0);
    const senders = names.filter(
      ({ name, from }) =>
        SENDERS.has(name) || from.endsWith("/store-runner.js") || from.endsWith("/wide-reads.js"),
    );
    expect(senders).toEqual([]);
  });

  it("sees a sender where one is imported (the executor's round reads)", () => {
    const names = importedNames("repository/facade/transaction-parts.ts").map(({ name }) => name);
    expect(names).toEqual(expect.arrayContaining(["Requests", "readEntity", "readWide", "Planning"]));
  });

  it.each(PLAN_INPUTS)("%s %s holds no stage that sends (the plan is described from data)", (file, name) => {
    const body = interfaceBody(file, name);
    const held = [...SENDERS].filter((sender) => new RegExp(`\\b${sender}\\b`).test(body));
    expect(held).toEqual([]);
  });

  it("sees a stage that sends where one is imported (the executor builds them from the parts)", () => {
    const names = importedNames("repository/facade/transaction-commit.ts").map(({ name }) => name);
    expect(names).toEqual(expect.arrayContaining(["SummaryStage", "SummaryCommitter", "LargeSteps"]));
  });
});
