/** The explorer page's style sheet (system fonts, no external resources). */
export const EXPLORER_STYLE: string = `
:root { color-scheme: light dark; --line: #8884; --muted: #777; --accent: #2563eb; --bad: #b91c1c; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
header { display: flex; gap: 1rem; align-items: baseline; padding: .6rem 1rem; border-bottom: 1px solid var(--line); }
header h1 { font-size: 1.1rem; margin: 0; }
header p { margin: 0; color: var(--muted); }
.layout { display: grid; grid-template-columns: 15rem 1fr; min-height: calc(100vh - 3rem); }
nav { padding: .8rem 1rem; border-right: 1px solid var(--line); }
nav h2, main h2 { font-size: 1rem; margin: 0 0 .5rem; }
nav ul { list-style: none; margin: 0 0 1rem; padding: 0; }
nav li { display: flex; gap: .4rem; align-items: baseline; }
nav li .count { color: var(--muted); font-size: .85em; }
#refresh-tables { margin-bottom: .5rem; }
nav li button { all: unset; cursor: pointer; flex: 1; padding: .2rem .4rem; border-radius: 4px; overflow-wrap: anywhere; }
nav li button:hover, nav li button:focus-visible { background: #8882; outline: 1px solid var(--accent); }
nav li button[aria-current="true"] { background: var(--accent); color: #fff; }
main { padding: .8rem 1rem; min-width: 0; }
form { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; margin: 0 0 .6rem; }
nav form { flex-direction: column; align-items: stretch; }
label { color: var(--muted); }
input, textarea, button { font: inherit; }
input { padding: .2rem .35rem; }
#filter { flex: 1 1 20rem; font-family: ui-monospace, monospace; }
#top { width: 5rem; }
.toolbar { display: flex; gap: .4rem; margin-bottom: .6rem; }
[role="alert"] { color: var(--bad); margin: .3rem 0; white-space: pre-wrap; }
#status { color: var(--muted); margin: .3rem 0; }
.grid { overflow: auto; max-height: 65vh; border: 1px solid var(--line); }
table { border-collapse: collapse; width: max-content; min-width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; max-width: 28rem; overflow-wrap: anywhere; }
th { position: sticky; top: 0; background: Canvas; }
th .type { display: block; font-weight: normal; font-size: .8em; color: var(--muted); }
td { font-family: ui-monospace, monospace; font-size: .92em; }
td.value { cursor: text; }
td.value:focus-visible { outline: 2px solid var(--accent); outline-offset: -2px; }
.cell-editor { flex-wrap: nowrap; margin: 0; gap: .25rem; }
.cell-editor input { width: 14rem; font-family: ui-monospace, monospace; }
td.actions { white-space: nowrap; font-family: inherit; }
td.actions button + button { margin-left: .3rem; }
.pager { display: flex; gap: .6rem; align-items: center; margin: .6rem 0; }
#editor { border: 1px solid var(--line); padding: .6rem; margin-top: .8rem; flex-direction: column; align-items: stretch; }
#editor[hidden] { display: none; }
#editor h3 { margin: 0; font-size: 1rem; }
#editor-json { width: 100%; min-height: 12rem; font-family: ui-monospace, monospace; }
.hint { color: var(--muted); margin: 0; }
`;
