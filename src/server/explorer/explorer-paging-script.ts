/**
 * The explorer script's page filling: the service ends a query page where the query crosses into
 * another partition (or after its time or size limit) and returns a continuation, so one request can
 * answer a short or even empty page while matching rows remain ("Query timeout and pagination",
 * Table service REST docs). A page of the grid therefore follows continuations until it holds `top`
 * rows, the rows run out, or `MAX_PAGE_REQUESTS` requests were made; the grid then says plainly that
 * more rows may follow. A part of `EXPLORER_SCRIPT` (explorer-script.ts), with no dependency on its
 * helpers, so a test can run it alone.
 */
// biome-ignore lint/complexity/noUselessStringRaw: every part of the browser script is raw, so a backslash added later stays as written
export const EXPLORER_PAGING_SCRIPT = String.raw`  // ---- Filling a page --------------------------------------------------------------------------
  var MAX_PAGE_REQUESTS = 10;

  // fetchPage(continuation, top) resolves to { rows, next } (next: the continuation, or null at the end).
  // Resolves to { rows, next, requests }: at most top rows, next where the following page starts.
  function fillPage(fetchPage, start, top, maxRequests) {
    var rows = [];
    var requests = 0;
    function step(continuation) {
      requests += 1;
      return fetchPage(continuation, top - rows.length).then(function (page) {
        rows = rows.concat(page.rows);
        if (page.next && rows.length < top && requests < maxRequests) return step(page.next);
        return { rows: rows, next: page.next, requests: requests };
      });
    }
    return step(start);
  }

  // What the status line says of a page of count rows (of top asked): a short page that is not the
  // last (the request bound was reached) says that more rows may follow.
  function pageSummary(count, top, more, requests) {
    var entities = count + (count === 1 ? " entity" : " entities");
    if (!more || count >= top) return count === 0 ? "No matching entities." : entities + " on this page";
    if (count === 0) {
      return "No matching entities in the first " + requests + " requests; more rows may follow in later partitions: press Next";
    }
    return entities + " on this page; more may follow in later partitions: press Next";
  }

`;
