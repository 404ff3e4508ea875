/**
 * The explorer script's NDJSON export of the current query, every page, in the CLI's export format.
 * A part of `EXPLORER_SCRIPT` (explorer-script.ts): it runs inside its function and uses its helpers.
 */
export const EXPLORER_EXPORT_SCRIPT = String.raw`  // ---- Export -------------------------------------------------------------------------------------
  el("export").addEventListener("click", function () {
    var table = state.table;
    var query = readQuery();
    var lines = [];
    say("Exporting…");
    function page(continuation) {
      return api("GET", queryPath(table, query, continuation, String(PAGE_SIZE_EXPORT))).then(function (r) {
        ((r.json && r.json.value) || []).forEach(function (e) { lines.push(JSON.stringify(typed(e, true))); });
        var next = continuationOf(r.headers);
        return next ? page(next) : lines;
      });
    }
    page(null).then(function (all) {
      var blob = new Blob([all.map(function (l) { return l + "\n"; }).join("")], { type: "application/x-ndjson" });
      var link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = table + ".ndjson";
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(function () { URL.revokeObjectURL(link.href); }, 60000);
      say("Exported " + all.length + (all.length === 1 ? " entity" : " entities"));
    }, function (error) { showError("query-error", error); });
  });

`;
