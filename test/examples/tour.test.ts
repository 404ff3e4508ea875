import { describe, expect, inject, it } from "vitest";
import { runTour } from "../../examples/tour.js";
import { AzureStore, MemoryStore, type TableStore } from "../../src/index.js";

async function narrate(store: TableStore): Promise<string> {
  const lines: string[] = [];
  await runTour(store, (line) => lines.push(line));
  return lines.join("\n");
}

describe("the tour (npm start)", () => {
  it.each([
    ["memory", () => new MemoryStore()],
    ["azurite", () => AzureStore.fromConnectionString(inject("azuriteConnectionString"))],
  ])("runs end to end on %s", async (_name, create) => {
    const output = await narrate(create());
    expect(output).toContain("empid_000223");
    expect(output).toMatch(/emp_000223\s+\d{19}_e1/);
    for (const kind of ["point", "range", "partition-scan", "table-scan"])
      expect(output).toContain(`kind=${kind}`);
    expect(output).toContain("1505 employees in");
    expect(output).toContain("rejected with ConcurrencyError (CONCURRENCY)");
    // Newest first: day 6, then 5, then 4.
    expect(output.indexOf("day 6")).toBeLessThan(output.indexOf("day 5"));
    expect(output.indexOf("day 5")).toBeLessThan(output.indexOf("day 4"));
  });
});
