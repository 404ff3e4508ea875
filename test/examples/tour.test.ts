import { describe, expect, inject, it } from "vitest";
import { runTour } from "../../examples/tour.js";
import { AzureStore, MemoryStore, type TableStore } from "../../src/index.js";
import { type StoreName, selectedStoreNames } from "../support/store-selection.js";

async function narrate(store: TableStore): Promise<string> {
  const lines: string[] = [];
  await runTour(store, (line) => lines.push(line));
  return lines.join("\n");
}

describe("the tour (npm start)", () => {
  const runs: Array<[string, () => TableStore]> = [
    ["memory", () => new MemoryStore()],
    ["azurite", () => AzureStore.fromConnectionString(inject("azuriteConnectionString"))],
    ["serve", () => AzureStore.fromConnectionString(inject("serveConnectionString"))],
  ];
  // TABLEKIT_STORES picks the stores of a run (default both).
  it.each(runs.filter(([name]) => selectedStoreNames().includes(name as StoreName)))(
    "runs end to end on %s",
    async (_name, create) => {
      const output = await narrate(create());
      // Keys as the design guide writes them: empid_000223, and 19 inverted-tick digits.
      expect(output).toMatch(/Employee\s+\{department\} \/ empid_\{employeeId:6\}\s+Sales\s+empid_000223/);
      expect(output).toMatch(/emp_000223\s+\d{19}_e1/);
      expect(output).toContain("301 employees written with their index copies (0 failed)");
      expect(output).toContain("by e-mail   : Jane Jones (employee 223)   kind=point");
      expect(output).toMatch(/RowKey=email_jonesj@contoso\.com/);
      // 300 employees × 30 expenses over 300 partitions: the minimum is one transaction per partition.
      expect(output).toContain("written 9,000 in 300 transactions");
      for (const kind of ["point", "range", "partition-scan", "table-scan"])
        expect(output).toContain(`kind=${kind}`);
      expect(output).toContain("301 employees in 3 pages");
      expect(output).toContain("rejected with ConcurrencyError (CONCURRENCY)");
      const ages = /age (\d+) → (\d+)/.exec(output);
      expect(Number(ages?.[2]) - Number(ages?.[1])).toBe(10);
      // Newest first: day 6, then 5, then 4.
      expect(output.indexOf("day 6")).toBeLessThan(output.indexOf("day 5"));
      expect(output.indexOf("day 5")).toBeLessThan(output.indexOf("day 4"));
    },
  );
});
