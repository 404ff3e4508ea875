/**
 * The explorer page's script (plain browser JavaScript, no framework). It speaks the Table REST API
 * through `/_explorer/api/` with the page's token header, and writes every value into the page as
 * text (`textContent`), never as HTML. Kept free of backticks and `${` so it can live in this string.
 */
export const EXPLORER_SCRIPT = String.raw`"use strict";
(function () {
  var TOKEN = document.querySelector('meta[name="tablekit-explorer-token"]').getAttribute("content");
  var API = "/_explorer/api/";
  var PAGE_SIZE_EXPORT = 1000;
  var COUNT_LIMIT = 1000;
  var COUNTED_TABLES = 50;

  var el = function (id) { return document.getElementById(id); };
  var state = { table: null, pages: [null], index: 0, next: null, rows: [], query: null };

  function make(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function api(method, path, body, extra) {
    var headers = {
      "x-tablekit-explorer-token": TOKEN,
      "Accept": "application/json;odata=minimalmetadata",
      "x-ms-version": "2019-02-02",
      "DataServiceVersion": "3.0;",
      "MaxDataServiceVersion": "3.0;NetFx"
    };
    if (extra) for (var k in extra) headers[k] = extra[k];
    var init = { method: method, headers: headers, credentials: "omit", cache: "no-store" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(API + path, init).then(function (res) {
      return res.text().then(function (text) {
        var json = null;
        if (text) { try { json = JSON.parse(text); } catch (e) { json = null; } }
        if (!res.ok) {
          var err = json && json["odata.error"];
          var message = err && err.message ? (err.message.value || err.message) : (text || res.statusText);
          var code = (err && err.code) || res.headers.get("x-ms-error-code") || "";
          var failure = new Error(res.status + (code ? " " + code : "") + ": " + String(message).split("\n")[0]);
          failure.status = res.status;
          throw failure;
        }
        return { json: json, headers: res.headers, status: res.status };
      });
    });
  }

  function showError(id, error) {
    var node = el(id);
    node.textContent = error ? (error.message || String(error)) : "";
    node.hidden = !error;
  }

  function say(text) { el("status").textContent = text; }

  // ---- Tables -------------------------------------------------------------------------------------
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

  // ---- Types and values ---------------------------------------------------------------------------
  // The OData JSON rule: an annotated value has its annotation's type; otherwise a JSON string is a
  // String, true/false a Boolean, an integral number an Int32 and any other number a Double.
  function typeOf(entity, name) {
    var note = entity[name + "@odata.type"];
    if (typeof note === "string") return note.replace(/^Edm\./, "");
    if (name === "Timestamp") return "DateTime";
    var v = entity[name];
    if (typeof v === "boolean") return "Boolean";
    if (typeof v === "number") return Number.isInteger(v) ? "Int32" : "Double";
    return "String";
  }

  function propertyNames(entity) {
    return Object.keys(entity).filter(function (k) {
      return k.indexOf("odata.") !== 0 && k.indexOf("@odata.") < 0 && entity[k] !== null;
    });
  }

  // The typed form of an entity: every non-String value annotated (the CLI's export format).
  function typed(entity, withTimestamp) {
    var out = {};
    propertyNames(entity).forEach(function (name) {
      if (name === "Timestamp" && !withTimestamp) return;
      var type = typeOf(entity, name);
      out[name] = entity[name];
      if (type !== "String") out[name + "@odata.type"] = "Edm." + type;
    });
    return out;
  }

  function entityPath(table, entity) {
    var q = function (key) { return encodeURIComponent(String(key).replace(/'/g, "''")); };
    return encodeURIComponent(table) + "(PartitionKey='" + q(entity.PartitionKey) + "',RowKey='" + q(entity.RowKey) + "')";
  }

  // ---- Query and grid -----------------------------------------------------------------------------
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
    var path = queryPath(table, state.query, state.pages[state.index], state.query.top || "20");
    say("Loading…");
    return api("GET", path).then(function (r) {
      if (table !== state.table) return;
      state.rows = (r.json && r.json.value) || [];
      state.next = continuationOf(r.headers);
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
    head.appendChild(tr);
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
    say(rows.length + (rows.length === 1 ? " entity" : " entities") + " on this page");
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

  // ---- Writes -------------------------------------------------------------------------------------
  var SYSTEM = ["PartitionKey", "RowKey", "Timestamp"];
  var TYPES = ["String", "Int32", "Int64", "Double", "Boolean", "DateTime", "Guid", "Binary"];

  // The JSON value of a typed text as the service reads it (Int64 and the other string-shaped types
  // stay strings; the service checks their form and answers 400 with its message).
  function wireValue(text, type) {
    var t = text.trim();
    if (type === "Int32") {
      if (!/^-?\d+$/.test(t) || Number(t) < -2147483648 || Number(t) > 2147483647) {
        throw new Error("An Int32 is a whole number from -2147483648 to 2147483647");
      }
      return Number(t);
    }
    if (type === "Double") {
      if (t === "NaN" || t === "Infinity" || t === "-Infinity") return t;
      if (t === "" || !isFinite(Number(t))) throw new Error("A Double is a number (or NaN, Infinity, -Infinity)");
      return Number(t);
    }
    if (type === "Boolean") {
      if (t === "true" || t === "false") return t === "true";
      throw new Error("A Boolean is true or false");
    }
    if (type === "Int64") {
      if (!/^-?\d+$/.test(t)) throw new Error("An Int64 is a whole number");
      return t;
    }
    return type === "String" ? text : t;
  }

  function editCell(td, row, column) {
    if (td.querySelector("form")) return;
    var name = column.name;
    var current = row[name];
    var present = current !== undefined && current !== null;
    var type = present ? typeOf(row, name) : column.types[0] || "String";
    clear(td);
    var form = make("form", null, "cell-editor");
    var input = make("input");
    input.value = present ? String(current) : "";
    input.setAttribute("aria-label", "Value of " + name);
    var select = make("select");
    select.setAttribute("aria-label", "Type of " + name);
    TYPES.forEach(function (t) {
      var option = make("option", t);
      option.value = t;
      option.selected = t === type;
      select.appendChild(option);
    });
    var save = make("button", "Save value");
    save.type = "submit";
    var cancel = make("button", "Cancel edit");
    cancel.type = "button";
    cancel.addEventListener("click", render);
    input.addEventListener("keydown", function (event) { if (event.key === "Escape") render(); });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var body = {};
      try {
        body[name] = wireValue(input.value, select.value);
      } catch (error) {
        showError("query-error", error);
        return;
      }
      if (select.value !== "String") body[name + "@odata.type"] = "Edm." + select.value;
      // Merge this one property, only into the version shown (its ETag): a 412 changes nothing.
      api("PATCH", entityPath(state.table, row), body, { "If-Match": row["odata.etag"] }).then(function () {
        showError("query-error", null);
        return load();
      }, function (error) { showError("query-error", error); });
    });
    form.appendChild(input);
    form.appendChild(select);
    form.appendChild(save);
    form.appendChild(cancel);
    td.appendChild(form);
    input.focus();
    input.select();
  }

  function deleteEntity(row) {
    if (!window.confirm("Delete entity " + row.PartitionKey + " / " + row.RowKey + "?")) return;
    api("DELETE", entityPath(state.table, row), undefined, { "If-Match": row["odata.etag"] || "*" })
      .then(function () { return load(); }, function (error) { showError("query-error", error); });
  }

  var editing = null;

  function openEditor(mode, row) {
    editing = { mode: mode, row: row };
    el("editor-title").textContent = mode === "edit"
      ? "Edit " + row.PartitionKey + " / " + row.RowKey
      : "Insert an entity into " + state.table;
    var sample = mode === "edit" ? typed(row, false)
      : { PartitionKey: "", RowKey: "", name: "text", count: "1", "count@odata.type": "Edm.Int64" };
    el("editor-json").value = JSON.stringify(sample, null, 2);
    showError("editor-error", null);
    el("editor").hidden = false;
    el("editor-json").focus();
  }

  function closeEditor() {
    editing = null;
    el("editor").hidden = true;
    showError("editor-error", null);
  }

  el("insert").addEventListener("click", function () { openEditor("insert", null); });
  el("cancel").addEventListener("click", closeEditor);
  el("editor").addEventListener("submit", function (event) {
    event.preventDefault();
    if (!editing) return;
    var entity;
    try {
      entity = JSON.parse(el("editor-json").value);
      if (!entity || typeof entity !== "object" || Array.isArray(entity)) throw new Error("the entity must be a JSON object");
    } catch (error) {
      showError("editor-error", new Error("Not valid JSON: " + error.message));
      return;
    }
    var request;
    if (editing.mode === "edit") {
      var row = editing.row;
      if (entity.PartitionKey !== row.PartitionKey || entity.RowKey !== row.RowKey) {
        showError("editor-error", new Error("PartitionKey and RowKey cannot change: insert a new entity instead"));
        return;
      }
      var body = {};
      Object.keys(entity).forEach(function (k) {
        if (k === "PartitionKey" || k === "RowKey" || k.indexOf("Timestamp") === 0 || k.indexOf("odata.") === 0) return;
        body[k] = entity[k];
      });
      // Replace, only if the row is still the version shown (its ETag): a 412 overwrites nothing.
      request = api("PUT", entityPath(state.table, row), body, { "If-Match": row["odata.etag"] });
    } else {
      request = api("POST", encodeURIComponent(state.table), entity, { "Prefer": "return-no-content" });
    }
    request.then(function () {
      closeEditor();
      return load();
    }, function (error) { showError("editor-error", error); });
  });

  // ---- Export -------------------------------------------------------------------------------------
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

  listTables();
})();
`;
