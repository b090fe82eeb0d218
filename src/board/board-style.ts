/**
 * The board's stylesheet, inlined under the page's CSP nonce (no external
 * files, no fonts, no network). The board has no script at all.
 */
export const BOARD_CSS = `
:root{--fg:#1b1f24;--muted:#5b6470;--bg:#f6f7f9;--card:#fff;--line:#d5dae1;--accent:#1f5fbf;--accent-bg:#e3edfb;
--pending:#8a5a00;--resuming:#1f5fbf;--completed:#1d7a3a;--stale:#6b6f76;--uncertain:#b3261e}
@media (prefers-color-scheme:dark){:root{--fg:#e8eaed;--muted:#a0a8b3;--bg:#15181c;--card:#1e2228;--line:#38404a;
--accent:#8ab4f8;--accent-bg:#22324a;--pending:#f0b64f;--resuming:#8ab4f8;--completed:#6fcf8a;--stale:#a0a8b3;--uncertain:#f28b82}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;align-items:center;justify-content:space-between;gap:12px;padding:12px 20px;background:var(--card);border-bottom:1px solid var(--line)}
header h1{font-size:18px;margin:0}
header h1 a{color:inherit;text-decoration:none}
main{padding:16px 20px;max-width:1180px;margin:0 auto}
a{color:var(--accent)}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
form.filters{display:flex;flex-wrap:wrap;gap:10px 16px;align-items:flex-end;background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px;margin-bottom:16px}
form.filters fieldset{border:0;margin:0;padding:0;display:flex;gap:8px;flex-wrap:wrap}
form.filters legend,label>span{display:block;font-size:12px;color:var(--muted);margin-bottom:2px}
input[type=text],input[type=number],input[type=password],select,textarea{font:inherit;padding:6px 8px;border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg)}
textarea{width:100%;min-height:64px}
button{font:inherit;padding:7px 14px;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
button.secondary{background:transparent;color:var(--accent)}
dl.numbers{display:flex;flex-wrap:wrap;gap:10px;margin:0 0 14px}
dl.numbers div{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px 14px;min-width:140px}
dl.numbers dt{font-size:12px;color:var(--muted)}
dl.numbers dd{margin:0;font-size:20px;font-weight:700}
dl.numbers dd .muted{font-size:12px;font-weight:400}
.counts{display:flex;gap:8px;flex-wrap:wrap;margin:0 0 16px;padding:0;list-style:none}
.counts li{background:var(--card);border:1px solid var(--line);border-radius:999px;padding:4px 12px}
section.state{margin-bottom:20px}
section.state h2{font-size:16px;margin:0 0 6px;display:flex;gap:8px;align-items:baseline}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:8px;overflow:hidden}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:top;font-size:14px}
th{font-size:12px;color:var(--muted);font-weight:600}
td code,dd code{font-size:13px;word-break:break-all}
.badge{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;border:1px solid currentColor}
.badge.pending{color:var(--pending)}.badge.resuming{color:var(--resuming)}.badge.completed{color:var(--completed)}
.badge.stale{color:var(--stale)}.badge.uncertain{color:var(--uncertain)}
.muted{color:var(--muted)}
.empty{color:var(--muted);font-style:italic;margin:4px 0 0}
.grid{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px}
@media (max-width:900px){.grid{grid-template-columns:minmax(0,1fr)}}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 16px;margin-bottom:16px}
.card h2{font-size:16px;margin:0 0 10px}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:4px 14px;margin:0}
dl.facts dt{color:var(--muted);font-size:13px}
dl.facts dd{margin:0}
ol.timeline{list-style:none;margin:0;padding:0 0 0 14px;border-left:2px solid var(--line)}
ol.timeline li{position:relative;margin:0 0 12px;padding-left:8px}
ol.timeline li::before{content:"";position:absolute;left:-21px;top:5px;width:10px;height:10px;border-radius:50%;background:var(--card);border:2px solid var(--accent)}
ol.timeline li:last-child::before{background:var(--accent)}
ol.timeline time{font-size:12px;color:var(--muted);display:block}
figure.lifecycle{margin:0;overflow-x:auto;display:flex;flex-wrap:wrap;gap:8px 24px;align-items:center}
figure.lifecycle figcaption{flex-basis:100%}
figure.lifecycle svg{max-width:100%;height:auto;display:block}
figure.lifecycle figcaption{font-size:13px;color:var(--muted);margin-top:6px}
.lifecycle .state rect{fill:var(--card);stroke:var(--line);stroke-width:1.5}
.lifecycle .state .inner{fill:none}
.lifecycle .state text{text-anchor:middle;font-size:14px;fill:var(--fg)}
.lifecycle .state.visited rect{stroke:var(--accent);stroke-width:2}
.lifecycle .state.current rect{fill:var(--accent);stroke:var(--accent);stroke-width:3}
.lifecycle .state.current .inner{stroke:#fff}
.lifecycle .state.current text{fill:#fff;font-weight:700}
.lifecycle .edge path,.lifecycle .edge-line{fill:none;stroke:var(--muted);stroke-width:1.2}
.lifecycle .edge.taken path{stroke:var(--accent);stroke-width:3}
.lifecycle .edge text{font-size:9.5px;fill:var(--muted);text-anchor:middle;paint-order:stroke;stroke:var(--card);stroke-width:4px}
.lifecycle .edge.taken text{fill:var(--accent);font-weight:700}
.lifecycle .arrowhead{fill:var(--muted)}.lifecycle .arrowhead.taken{fill:var(--accent)}
.lifecycle .initial{fill:var(--fg)}
ul.transitions{flex:1 1 320px;font-size:12px;color:var(--muted);margin:0;padding-left:16px}
ul.transitions li.taken{color:var(--accent);font-weight:700}
.notice{border-left:4px solid var(--accent);background:var(--accent-bg);padding:10px 14px;border-radius:4px;margin-bottom:16px}
.notice.refused{border-color:var(--uncertain)}
fieldset.outcomes{border:0;padding:0;margin:0 0 10px}
fieldset.outcomes label{display:block;margin:4px 0}
.actions{display:flex;gap:10px;align-items:center;margin-top:10px}
`
