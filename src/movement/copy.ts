import type { ImportItem } from "./import.js";
import type { Row } from "./typed-row.js";

/**
 * A table's pages as import items (copy: export into import without a file). The next page is asked
 * for while the rows of this one are written, so reading and writing overlap; one page is read ahead
 * at most, so memory stays flat.
 */
export async function* rowsAsItems(
  pages: AsyncIterable<Row[]>,
  onRows?: (rows: number) => void,
): AsyncGenerator<ImportItem> {
  const iterator = pages[Symbol.asyncIterator]();
  let line = 0;
  let next = iterator.next();
  for (;;) {
    const page = await next;
    if (page.done === true) return;
    next = iterator.next();
    onRows?.(page.value.length);
    for (const row of page.value) yield { line: ++line, end: 0, row };
  }
}
