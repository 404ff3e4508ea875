import { Progress } from "../movement/progress.js";
import { verifyTables } from "../movement/verify.js";
import { connect, endpointOf, tablesOf } from "./connection.js";
import { UsageError } from "./options.js";

/** The flags of `tablekit verify`, as commander parses them. */
export interface VerifyFlags {
  connectionString?: string;
  quiet?: boolean;
  table?: string;
  all?: boolean;
  to: string;
  toTable?: string;
  filter?: string;
  show: number;
}

/** `tablekit verify`: compares two tables entity by entity; exit code 1 when they differ. */
export async function runVerify(flags: VerifyFlags): Promise<void> {
  const first = endpointOf(flags, "verify");
  const second = connect(flags.to, "verify");
  const tables = await tablesOf(flags, first);
  if (flags.all === true && flags.toTable !== undefined)
    throw new UsageError("--to-table goes with --table, not --all");
  const progress = new Progress("verify", { quiet: flags.quiet });
  let shown = 0;
  let differences = 0;
  let compared = 0;
  if (flags.all === true) {
    const theirs = new Set(await second.listTables());
    for (const table of tables) theirs.delete(table);
    for (const table of theirs) {
      differences++;
      if (shown++ < flags.show) process.stdout.write(`table ${table}: only on the second side\n`);
    }
  }
  for (const table of tables) {
    const toTable = flags.toTable ?? table;
    const result = await verifyTables(
      { endpoint: first, table },
      { endpoint: second, table: toTable },
      { filter: flags.filter },
      (m) => {
        if (shown++ >= flags.show) return;
        const where = `${table} PartitionKey=${JSON.stringify(m.partitionKey)} RowKey=${JSON.stringify(m.rowKey)}`;
        const what =
          m.kind === "only-first"
            ? "only on the first side"
            : m.kind === "only-second"
              ? "only on the second side"
              : m.detail;
        process.stdout.write(`${where}: ${what}\n`);
      },
      (n) => progress.add(n),
    );
    compared += result.compared;
    const diff = result.onlyFirst + result.onlySecond + result.different;
    differences += diff;
    if (diff > 0) {
      process.stdout.write(
        `${table}: ${result.equal} equal, ${result.different} different, ${result.onlyFirst} only on the first side, ${result.onlySecond} only on the second side\n`,
      );
    }
  }
  progress.finish(
    differences === 0
      ? `tablekit verify: equal (${compared.toLocaleString("en-US")} rows in ${tables.length} table${tables.length === 1 ? "" : "s"})`
      : `tablekit verify: ${differences} difference${differences === 1 ? "" : "s"} in ${compared.toLocaleString("en-US")} rows`,
    compared,
  );
  if (differences > 0) process.exitCode = 1;
}
