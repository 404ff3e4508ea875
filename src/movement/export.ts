import type { ReadOptions, TableEndpoint } from "./endpoint.js";
import type { LineSink } from "./lines.js";
import { formatLine } from "./typed-row.js";

/**
 * Writes a table's rows as lines of the format (docs/data-movement.md), page by page: one page in
 * memory at a time, and the sink's back-pressure respected. `onRows` is told each page's row count.
 */
export async function exportTable(
  endpoint: TableEndpoint,
  table: string,
  sink: LineSink,
  options: ReadOptions = {},
  onRows?: (rows: number) => void,
): Promise<number> {
  let count = 0;
  for await (const page of endpoint.pages(table, options)) {
    if (page.length === 0) continue;
    let text = "";
    for (const row of page) text += `${formatLine(row)}\n`;
    const drained = sink.write(text);
    count += page.length;
    onRows?.(page.length);
    if (drained !== undefined) await drained;
  }
  return count;
}
