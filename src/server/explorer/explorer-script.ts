import { EXPLORER_EXPORT_SCRIPT } from "./explorer-export-script.js";
import { EXPLORER_GRID_SCRIPT } from "./explorer-grid-script.js";
import { EXPLORER_PAGING_SCRIPT } from "./explorer-paging-script.js";
import { EXPLORER_TABLES_SCRIPT } from "./explorer-tables-script.js";
import { EXPLORER_VALUES_SCRIPT } from "./explorer-values-script.js";
import { EXPLORER_WRITES_SCRIPT } from "./explorer-writes-script.js";

/**
 * The explorer page's script (plain browser JavaScript, no framework). It speaks the Table REST API
 * through `/_explorer/api/` with the page's token header, and writes every value into the page as
 * text (`textContent`), never as HTML. Kept free of backticks and `${` so it can live in strings;
 * its parts (one job each, in explorer-*-script.ts) run inside one function, in this order, sharing its helpers.
 */
/** The script's start: its constants and state, and the helpers every part uses (DOM, requests, messages). */
const EXPLORER_SCRIPT_CORE = String.raw`"use strict";
(function () {
  var TOKEN = document.querySelector('meta[name="tablekit-explorer-token"]').getAttribute("content");
  var API = "/_explorer/api/";
  var PAGE_SIZE_EXPORT = 1000;
  var COUNT_LIMIT = 1000;
  var COUNTED_TABLES = 50;

  var el = function (id) { return document.getElementById(id); };
  var state = { table: null, pages: [null], index: 0, next: null, rows: [], query: null, requests: 0, top: 0 };

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

`;

/** The script's end: the table list is loaded when the page opens. */
// biome-ignore lint/complexity/noUselessStringRaw: every part of the browser script is raw, so a backslash added later stays as written
const EXPLORER_SCRIPT_END = String.raw`  listTables();
})();
`;

export const EXPLORER_SCRIPT =
  EXPLORER_SCRIPT_CORE +
  EXPLORER_TABLES_SCRIPT +
  EXPLORER_VALUES_SCRIPT +
  EXPLORER_PAGING_SCRIPT +
  EXPLORER_GRID_SCRIPT +
  EXPLORER_WRITES_SCRIPT +
  EXPLORER_EXPORT_SCRIPT +
  EXPLORER_SCRIPT_END;
