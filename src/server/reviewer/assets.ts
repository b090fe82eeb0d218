/**
 * Static CSS and the small page script of the reviewer page. They are inlined
 * (with a per-response CSP nonce) so the page is one request on a slow phone
 * connection and needs no static file route.
 */

/** Mobile-first styles: one column at 320–375 px, tap targets of at least 48 px. */
export const REVIEWER_CSS = `
:root{color-scheme:light dark;--bg:#f4f5f7;--card:#fff;--text:#15171c;--muted:#596070;--border:#d6dae1;
--approve:#0d7a3e;--deny:#b42318;--accent:#1f4fd1;--low:#e7f5ec;--low-t:#0d5c30;--med:#fff4d6;--med-t:#7a5300;
--high:#fde7e6;--high-t:#9b1c14}
@media (prefers-color-scheme:dark){:root{--bg:#101216;--card:#1a1d23;--text:#eef0f3;--muted:#a2a9b6;
--border:#2d323b;--approve:#23a05b;--deny:#ef6b63;--accent:#7297ff;--low:#12311f;--low-t:#7fdca4;
--med:#3a2e0b;--med-t:#f5cf6b;--high:#3d1513;--high-t:#ff9a93}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--text)}
header{position:sticky;top:0;z-index:1;display:flex;justify-content:space-between;align-items:center;gap:8px;
padding:12px 16px;background:var(--card);border-bottom:1px solid var(--border)}
h1{font-size:1.05rem;margin:0}
main{max-width:640px;margin:0 auto;padding:12px}
a{color:var(--accent)}
.muted{color:var(--muted);font-size:.875rem;margin:.25rem 0}
.live{font-size:.8rem;color:var(--muted);white-space:nowrap}
.decision{background:var(--card);border:1px solid var(--border);border-radius:12px;padding:16px;margin:0 0 12px}
.decision h2{font-size:1.15rem;line-height:1.35;margin:.35rem 0 .75rem;overflow-wrap:anywhere}
.meta{display:flex;flex-wrap:wrap;gap:6px 10px;align-items:center;margin:0;color:var(--muted);font-size:.875rem}
.agent{font-weight:600;color:var(--text)}
.risk{border-radius:999px;padding:2px 10px;font-weight:700;font-size:.75rem;text-transform:uppercase;letter-spacing:.03em}
.risk-low{background:var(--low);color:var(--low-t)}
.risk-medium{background:var(--med);color:var(--med-t)}
.risk-high{background:var(--high);color:var(--high-t)}
.action{border-left:3px solid var(--accent);padding:2px 0 2px 12px;margin:0 0 12px}
.action .label{font-weight:700;margin:0}
.action .effect{margin:.15rem 0 .5rem;overflow-wrap:anywhere}
table{width:100%;border-collapse:collapse;font-size:.95rem}
th,td{text-align:left;vertical-align:top;padding:6px 0;border-top:1px solid var(--border);overflow-wrap:anywhere}
th{font-weight:500;color:var(--muted);padding-right:12px;width:45%}
td{font-weight:600;font-variant-numeric:tabular-nums}
form{margin:12px 0 0}
.buttons{display:grid;grid-template-columns:1fr 1fr;gap:10px}
.buttons.options{grid-template-columns:1fr}
button{min-height:48px;font:inherit;font-weight:600;border-radius:10px;border:1px solid var(--border);
background:var(--card);color:var(--text);padding:10px 14px;cursor:pointer;touch-action:manipulation;overflow-wrap:anywhere}
button.approve{background:var(--approve);border-color:var(--approve);color:#fff}
button.deny{color:var(--deny);border-color:var(--deny)}
button:disabled{opacity:.55;cursor:default}
button:focus-visible,input:focus-visible,a:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.input-row{display:flex;gap:8px}
.input-row input{flex:1;min-width:0;min-height:48px;font:inherit;padding:10px 12px;border-radius:10px;
border:1px solid var(--border);background:var(--bg);color:var(--text)}
.outcome{font-weight:600;margin:.5rem 0 0}
.notice{background:var(--card);border:1px solid var(--border);border-radius:12px;padding:16px}
#flash{margin:0 0 12px;padding:10px 14px;border-radius:10px;background:var(--card);border:1px solid var(--accent)}
#flash:empty{display:none}
.input{margin:0 0 12px}
.input-title{font-weight:600;margin:0 0 .25rem;font-size:.9rem;color:var(--muted)}
.input dl{margin:0}
.input .row{display:grid;grid-template-columns:minmax(0,45%) minmax(0,1fr);gap:12px;padding:6px 0;border-top:1px solid var(--border)}
.input dt{color:var(--muted);overflow-wrap:anywhere}
.input dd{margin:0;font-weight:600;overflow-wrap:anywhere;white-space:pre-wrap}
.fold summary{cursor:pointer;min-height:24px}
.fold .full{margin:.35rem 0 0;font-weight:500;white-space:pre-wrap;overflow-wrap:anywhere}
.batch-items{list-style:none;margin:0;padding:0}
.batch-items>li>.decision{margin:0 0 10px;padding:12px;border-radius:10px}
.batch-items h2{font-size:1rem}
.bulk{position:sticky;bottom:0;background:var(--card);padding:10px 0 4px;border-top:1px solid var(--border)}
.approvers{margin:8px 0 0;padding:8px 12px;border-radius:10px;background:var(--bg);font-weight:600;font-size:.9rem;font-variant-numeric:tabular-nums}
.approvers span{white-space:nowrap}
.nav{display:flex;align-items:center;gap:12px}
.visually-hidden{position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
`

/**
 * Keeps the list current without a reload: every server-sent event (and each
 * (re)connect, which may have missed events) re-fetches `/review/list` and
 * reconciles cards by decision id, so a half-typed answer in a card that is
 * still pending survives the refresh; a kept card's `data-live` lines (how an
 * approvers' set stands) take the new text. Answers are posted with fetch;
 * without JavaScript the same forms post normally. On a decision page that
 * has such a line, the same events re-read the card alone: a new status
 * replaces the card (a withdrawn question then says why), otherwise only its
 * live lines change.
 */
export const REVIEWER_SCRIPT = `
(() => {
  const live = document.getElementById('live');
  const list = document.getElementById('decisions');
  const single = document.querySelector('main[data-card-url]');
  if (!list && !single) return;

  // One load at a time; a change during a load runs one more after it.
  function serialized(load) {
    let running = null;
    let again = false;
    return function refresh() {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        do {
          again = false;
          try {
            const res = await fetch(load.url(), { headers: { accept: 'text/html' }, cache: 'no-store' });
            if (res.status === 401) {
              location.reload();
              return;
            }
            if (res.ok) load.apply(await res.text());
          } catch {
            // Offline for a moment: the next event or reconnect refreshes again.
          }
        } while (again);
      })().finally(() => {
        running = null;
      });
      return running;
    };
  }

  function parse(markup) {
    const template = document.createElement('template');
    template.innerHTML = markup;
    return Array.from(template.content.children);
  }

  function syncLive(el, node) {
    for (const fresh of Array.from(node.querySelectorAll('[data-live]'))) {
      const shown = Array.from(el.querySelectorAll('[data-live]')).find((line) => line.dataset.live === fresh.dataset.live);
      // The element stays (a screen reader keeps announcing it); only what it says changes.
      if (shown && shown.innerHTML !== fresh.innerHTML) shown.replaceChildren(...Array.from(fresh.childNodes));
    }
  }

  function connect(refresh) {
    const source = new EventSource('/review/events');
    source.addEventListener('ready', () => {
      if (live) live.textContent = 'Live';
      refresh();
    });
    source.addEventListener('decision', () => refresh());
    source.addEventListener('approvers', () => refresh());
    source.addEventListener('error', () => {
      if (live) live.textContent = 'Reconnecting…';
    });
    // EventSource gives up for good on a non-200 answer (e.g. the device was
    // revoked); fall back to polling so the page still notices.
    setInterval(() => {
      if (source.readyState === EventSource.CLOSED) refresh();
    }, 5000);
  }

  if (single) {
    connect(serialized({
      url: () => single.dataset.cardUrl,
      apply(markup) {
        const node = parse(markup).find((el) => el.dataset.decisionId);
        const el = single.querySelector('article[data-decision-id]');
        if (!node || !el) return;
        if (node.dataset.status !== el.dataset.status) el.replaceWith(node);
        else syncLive(el, node);
      },
    }));
    return;
  }

  const empty = document.getElementById('empty');
  const flash = document.getElementById('flash');

  function apply(markup) {
    const incoming = parse(markup).filter((el) => el.dataset.decisionId);
    const current = new Map();
    for (const el of Array.from(list.children)) current.set(el.dataset.decisionId, el);
    const wanted = new Set(incoming.map((el) => el.dataset.decisionId));
    for (const [id, el] of current) if (!wanted.has(id)) el.remove();
    let previous = null;
    for (const node of incoming) {
      const kept = current.get(node.dataset.decisionId);
      if (kept) syncLive(kept, node);
      const el = kept || node;
      const expected = previous ? previous.nextElementSibling : list.firstElementChild;
      if (expected !== el) {
        if (previous) previous.after(el);
        else list.prepend(el);
      }
      previous = el;
    }
    empty.hidden = incoming.length > 0;
    list.dataset.count = String(incoming.length);
  }

  const refresh = serialized({ url: () => '/review/list', apply });
  connect(refresh);

  document.addEventListener('submit', async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute('data-answer')) return;
    event.preventDefault();
    const body = new URLSearchParams(new FormData(form, event.submitter));
    const controls = Array.from(form.querySelectorAll('button,input'));
    for (const control of controls) control.disabled = true;
    let message = 'Could not send the answer.';
    try {
      const res = await fetch(form.action, { method: 'POST', body, headers: { accept: 'application/json' } });
      const data = await res.json().catch(() => ({}));
      if (typeof data.message === 'string') message = data.message;
    } catch {
      message = 'Network error: the answer was not sent.';
    }
    flash.textContent = message;
    for (const control of controls) control.disabled = false;
    await refresh();
  });
})();
`
