import { EXPLORER_SCRIPT } from "./explorer-script.js";
import { EXPLORER_STYLE } from "./explorer-style.js";

/** What one answer of the explorer page embeds. */
export interface ExplorerPageContext {
  /** The server's per-process explorer token (sent back by the page in a request header). */
  readonly token: string;
  /** The account the server serves (shown in the header). */
  readonly account: string;
  /** The Content-Security-Policy nonce of this answer's script and style. */
  readonly nonce: string;
}

/** The explorer's HTML page: markup, style and script inline, nothing fetched from elsewhere. */
export function renderExplorerPage(context: ExplorerPageContext): string {
  const nonce = escapeHtml(context.nonce);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="tablekit-explorer-token" content="${escapeHtml(context.token)}">
<title>tablekit explorer · ${escapeHtml(context.account)}</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">${EXPLORER_STYLE}</style>
</head>
<body>
<header><h1>tablekit explorer</h1><p>account ${escapeHtml(context.account)}</p></header>
<div class="layout">
<nav aria-labelledby="tables-title">
<h2 id="tables-title">Tables</h2>
<button type="button" id="refresh-tables">Refresh tables</button>
<ul id="tables"></ul>
<p id="no-tables" class="hint" hidden>No tables yet.</p>
<p id="tables-error" role="alert" hidden></p>
<form id="create-table">
<label for="new-table">New table name</label>
<input id="new-table" autocomplete="off" spellcheck="false" pattern="[A-Za-z][A-Za-z0-9]{2,62}">
<button type="submit">Create table</button>
</form>
</nav>
<main>
<p id="empty" class="hint">Choose a table to see its entities.</p>
<section id="view" hidden aria-labelledby="table-title">
<h2 id="table-title"></h2>
<div class="toolbar">
<button type="button" id="insert">Insert entity</button>
<button type="button" id="export">Export NDJSON</button>
<button type="button" id="drop-table">Delete table</button>
</div>
<form id="query">
<label for="filter">Filter</label>
<input id="filter" autocomplete="off" spellcheck="false" placeholder="PartitionKey eq 'a' and n gt 5L">
<label for="select">$select</label>
<input id="select" autocomplete="off" spellcheck="false" placeholder="RowKey,n">
<label for="top">$top</label>
<input id="top" type="number" min="1" max="1000" value="20">
<button type="submit">Run</button>
</form>
<p id="query-error" role="alert" hidden></p>
<p id="status" role="status"></p>
<div class="grid"><table id="grid"><thead id="grid-head"></thead><tbody id="grid-body"></tbody></table></div>
<div class="pager">
<button type="button" id="prev" disabled>Previous</button>
<span id="page"></span>
<button type="button" id="next" disabled>Next</button>
</div>
<form id="editor" hidden aria-labelledby="editor-title">
<h3 id="editor-title"></h3>
<label for="editor-json">Entity JSON</label>
<textarea id="editor-json" spellcheck="false"></textarea>
<p class="hint">Typed values carry an annotation, e.g. "n": "5", "n@odata.type": "Edm.Int64" (Int64, DateTime, Guid, Binary, Double, Boolean, Int32). Saving an edit replaces the entity only if nobody changed it since it was shown.</p>
<p id="editor-error" role="alert" hidden></p>
<div class="toolbar"><button type="submit">Save</button><button type="button" id="cancel">Cancel</button></div>
</form>
</section>
</main>
</div>
<script nonce="${nonce}">${EXPLORER_SCRIPT}</script>
</body>
</html>
`;
}

/** Text for HTML content and attribute values: the five characters that could end or open markup. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}
