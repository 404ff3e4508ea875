/**
 * The explorer script's query form and result grid: query paths, continuations, paging, rendering rows as text.
 * A part of `EXPLORER_SCRIPT` (explorer-script.ts): it runs inside its function and uses its helpers.
 */
// biome-ignore lint/complexity/noUselessStringRaw: every part of the browser script is raw, so a backslash added later stays as written
export const EXPLORER_GRID_SCRIPT = String.raw`  // ---- Query and grid -----------------------------------------------------------------------------
  function readQuery() {
    return { filter: el("filter").value.trim(), select: el("select").value.trim(), top: el("top").value.trim() };
  }

  function queryPath(table, query, continuation, top) {
    var parts = [];
    if (query.filter) parts.push("$filter=" + encodeURIComponent(query.filter));
    if (query.select) parts.push("$select=" + encodeURIComponent(query.select));
    if (top) parts.push("$top=" + encodeURIComponent(top));
    if (continuation) {
      parts.push("NextPartitionKey=" + encodeURIComponent(continuation.pk));
      if (continuation.rk) parts.push("NextRowKey=" + encodeURIComponent(continuation.rk));
    }
    return encodeURIComponent(table) + "()" + (parts.length ? "?" + parts.join("&") : "");
  }

  function continuationOf(headers) {
    var pk = headers.get("x-ms-continuation-NextPartitionKey");
    return pk ? { pk: pk, rk: headers.get("x-ms-continuation-NextRowKey") } : null;
  }

  function openTable(name) {
    state.table = name;
    el("table-title").textContent = name;
    el("view").hidden = false;
    el("empty").hidden = true;
    el("filter").value = "";
    el("select").value = "";
    closeEditor();
    Array.prototype.forEach.call(document.querySelectorAll(".table-link"), function (b) {
      if (b.textContent === name) b.setAttribute("aria-current", "true");
      else b.removeAttribute("aria-current");
    });
    run();
  }

  function run() {
    state.query = readQuery();
    state.pages = [null];
    state.index = 0;
    return load();
  }

  function load() {
    var table = state.table;
    var query = state.query;
    var top = Math.max(1, parseInt(query.top, 10) || 20);
    say("Loading…");
    var fetchPage = function (continuation, count) {
      return api("GET", queryPath(table, query, continuation, String(count))).then(function (r) {
        return { rows: (r.json && r.json.value) || [], next: continuationOf(r.headers) };
      });
    };
    return fillPage(fetchPage, state.pages[state.index], top, MAX_PAGE_REQUESTS).then(function (page) {
      if (table !== state.table) return;
      state.rows = page.rows;
      state.next = page.next;
      state.requests = page.requests;
      state.top = top;
      showError("query-error", null);
      render();
    }, function (error) {
      state.rows = [];
      state.next = null;
      render();
      showError("query-error", error);
    });
  }

  function columnsOf(rows) {
    var order = ["PartitionKey", "RowKey", "Timestamp"];
    var seen = {};
    var types = {};
    rows.forEach(function (row) {
      propertyNames(row).forEach(function (name) {
        if (!seen[name]) { seen[name] = true; types[name] = []; if (order.indexOf(name) < 0) order.push(name); }
        var t = typeOf(row, name);
        if (types[name].indexOf(t) < 0) types[name].push(t);
      });
    });
    return order.filter(function (n) { return seen[n]; }).map(function (n) { return { name: n, types: types[n] }; });
  }

  function render() {
    var rows = state.rows;
    var columns = columnsOf(rows);
    var head = el("grid-head");
    var body = el("grid-body");
    clear(head);
    clear(body);
    var tr = make("tr");
    columns.forEach(function (c) {
      var th = make("th");
      th.scope = "col";
      th.appendChild(make("span", c.name, "name"));
      th.appendChild(document.createTextNode(" "));
      th.appendChild(make("span", c.types.join(" | "), "type"));
      tr.appendChild(th);
    });
    var actions = make("th", "Actions");
    actions.scope = "col";
    tr.appendChild(actions);
    // No rows, no header: a lone Actions column would head nothing.
    if (rows.length > 0) head.appendChild(tr);
    rows.forEach(function (row) {
      var line = make("tr");
      columns.forEach(function (c) {
        var v = row[c.name];
        var td = make("td", v === undefined || v === null ? "" : v);
        if (v !== undefined && v !== null) td.title = typeOf(row, c.name);
        if (SYSTEM.indexOf(c.name) < 0) {
          // A value is edited in place: double-click, or Enter on the focused cell.
          td.tabIndex = 0;
          td.className = "value";
          td.addEventListener("dblclick", function () { editCell(td, row, c); });
          td.addEventListener("keydown", function (event) {
            if (event.key === "Enter" && event.target === td) { event.preventDefault(); editCell(td, row, c); }
          });
        }
        line.appendChild(td);
      });
      var cell = make("td", null, "actions");
      var edit = make("button", "Edit");
      edit.type = "button";
      edit.addEventListener("click", function () { openEditor("edit", row); });
      var drop = make("button", "Delete");
      drop.type = "button";
      drop.addEventListener("click", function () { deleteEntity(row); });
      cell.appendChild(edit);
      cell.appendChild(drop);
      line.appendChild(cell);
      body.appendChild(line);
    });
    el("page").textContent = "Page " + (state.index + 1);
    el("prev").disabled = state.index === 0;
    el("next").disabled = !state.next;
    say(pageSummary(rows.length, state.top, Boolean(state.next), state.requests));
  }

  el("query").addEventListener("submit", function (event) { event.preventDefault(); run(); });
  el("next").addEventListener("click", function () {
    if (!state.next) return;
    state.pages[state.index + 1] = state.next;
    state.pages.length = state.index + 2;
    state.index += 1;
    load();
  });
  el("prev").addEventListener("click", function () {
    if (state.index === 0) return;
    state.index -= 1;
    load();
  });

`;
