/**
 * The explorer script's table list: listing (with cheap entity counts), creating and deleting tables.
 * A part of `EXPLORER_SCRIPT` (explorer-script.ts): it runs inside its function and uses its helpers.
 */
// biome-ignore lint/complexity/noUselessStringRaw: every part of the browser script is raw, so a backslash added later stays as written
export const EXPLORER_TABLES_SCRIPT = String.raw`  // ---- Tables -------------------------------------------------------------------------------------
  function listTables() {
    var names = [];
    function page(next) {
      var path = "Tables" + (next ? "?NextTableName=" + encodeURIComponent(next) : "");
      return api("GET", path).then(function (r) {
        (r.json && r.json.value || []).forEach(function (t) { names.push(t.TableName); });
        var more = r.headers.get("x-ms-continuation-NextTableName");
        return more ? page(more) : names;
      });
    }
    return page(null).then(function (all) {
      all.sort();
      var list = el("tables");
      clear(list);
      all.forEach(function (name) {
        var item = make("li");
        var button = make("button", name, "table-link");
        button.type = "button";
        if (name === state.table) button.setAttribute("aria-current", "true");
        button.addEventListener("click", function () { openTable(name); });
        item.appendChild(button);
        // The count sits beside the button, so the button's name is the table's name exactly.
        var count = make("span", "", "count");
        item.appendChild(count);
        list.appendChild(item);
        if (all.indexOf(name) < COUNTED_TABLES) countEntities(name, count);
      });
      el("no-tables").hidden = all.length > 0;
      showError("tables-error", null);
      return all;
    }, function (error) { showError("tables-error", error); });
  }

  // Cheap counts only: keys alone, at most COUNT_LIMIT of them in a few pages; a longer table shows "1000+".
  function countEntities(name, node) {
    var n = 0;
    function page(continuation, requests) {
      var path = queryPath(name, { select: "PartitionKey" }, continuation, String(COUNT_LIMIT - n));
      return api("GET", path).then(function (r) {
        n += ((r.json && r.json.value) || []).length;
        var next = continuationOf(r.headers);
        if (!next) return String(n);
        if (n >= COUNT_LIMIT || requests >= 10) return n + "+";
        return page(next, requests + 1);
      });
    }
    page(null, 1).then(function (text) {
      node.textContent = text;
      node.title = "entities";
    }, function () { node.textContent = ""; });
  }

  el("refresh-tables").addEventListener("click", function () { listTables(); });

  el("create-table").addEventListener("submit", function (event) {
    event.preventDefault();
    var name = el("new-table").value.trim();
    if (!name) return;
    api("POST", "Tables", { TableName: name }, { "Prefer": "return-no-content" }).then(function () {
      el("new-table").value = "";
      showError("tables-error", null);
      return listTables().then(function () { openTable(name); });
    }, function (error) { showError("tables-error", error); });
  });

  el("drop-table").addEventListener("click", function () {
    var name = state.table;
    if (!name || !window.confirm("Delete table " + name + " and all its entities?")) return;
    api("DELETE", "Tables('" + encodeURIComponent(name.replace(/'/g, "''")) + "')").then(function () {
      state.table = null;
      el("view").hidden = true;
      el("empty").hidden = false;
      return listTables();
    }, function (error) { showError("query-error", error); });
  });

`;
