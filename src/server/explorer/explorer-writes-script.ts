/**
 * The explorer script's writes: a value edited in its cell, an entity edited or inserted as JSON, a delete; each conditional on the ETag shown.
 * A part of `EXPLORER_SCRIPT` (explorer-script.ts): it runs inside its function and uses its helpers.
 */
export const EXPLORER_WRITES_SCRIPT = String.raw`  // ---- Writes -------------------------------------------------------------------------------------
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

`;
