// Tablo console. Plain DOM: every value from the data is set with textContent or as an
// attribute value, never parsed as HTML.
'use strict';

const state = { csrf: '', accounts: [], account: '', services: [], timer: 0 };
const EDM = ['Edm.String', 'Edm.Int32', 'Edm.Int64', 'Edm.Double', 'Edm.Boolean', 'Edm.DateTime', 'Edm.Guid', 'Edm.Binary'];

// el builds an element; strings among the children become text nodes.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'text') e.textContent = v;
    else if (k === 'style') e.style.cssText = v; // CSSOM: allowed by the style-src CSP, unlike a style attribute
    else if (v !== false && v != null) e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c == null) continue;
    e.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}

function setStatus(msg, isError) {
  const s = document.getElementById('status');
  s.textContent = msg || '';
  s.className = isError ? 'error' : '';
}

// api calls the console's back end; mutating calls carry the CSRF token.
async function api(method, path, opts) {
  opts = opts || {};
  const headers = Object.assign({}, opts.headers || {});
  if (method !== 'GET' && method !== 'HEAD') headers['X-CSRF-Token'] = state.csrf;
  const r = await fetch(path, { method, headers, body: opts.body, credentials: 'same-origin' });
  if (r.status === 401) { showLogin(); throw new Error('sign in required'); }
  return r;
}

// errorText turns an error reply (Table JSON, console JSON or text) into a message.
async function errorText(r) {
  const t = await r.text();
  try {
    const j = JSON.parse(t);
    if (j['odata.error']) return j['odata.error'].code + ': ' + j['odata.error'].message.value;
    if (j.error) return j.error.code + ': ' + j.error.message;
  } catch (e) { /* not JSON */ }
  return r.status + ' ' + t.slice(0, 300);
}

function tablePath(rest) { return '/api/table/' + encodeURIComponent(state.account) + '/' + rest; }
function keyLiteral(k) { return "'" + encodeURIComponent(String(k).replace(/'/g, "''")) + "'"; }
function entityPath(table, pk, rk) {
  return tablePath(encodeURIComponent(table) + '(PartitionKey=' + keyLiteral(pk) + ',RowKey=' + keyLiteral(rk) + ')');
}

// ---- sign-in ----

function showLogin(msg) {
  clearInterval(state.timer);
  const main = document.getElementById('main');
  const acct = el('input', { id: 'login-account', placeholder: 'account name' });
  const key = el('input', { id: 'login-key', type: 'password', placeholder: 'account key (base64)' });
  const token = el('input', { id: 'login-token', type: 'password', placeholder: 'or the start-up token' });
  const err = el('p', { id: 'login-error', class: 'error', text: msg || '' });
  const form = el('form', { id: 'login', onsubmit: async (ev) => {
    ev.preventDefault();
    const body = token.value ? { token: token.value } : { account: acct.value, key: key.value };
    const r = await fetch('/api/login', { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' }, credentials: 'same-origin' });
    if (!r.ok) { err.textContent = await errorText(r); return; }
    start();
  } }, el('h2', { text: 'Sign in' }),
  el('p', { class: 'muted', text: 'This console is reachable beyond loopback: sign in as an account owner.' }),
  acct, ' ', key, ' ', token, ' ', el('button', { type: 'submit', text: 'Sign in' }), err);
  main.replaceChildren(form);
}

// ---- routing ----

async function start() {
  let r;
  try { r = await api('GET', '/api/session'); } catch (e) { return; }
  const s = await r.json();
  state.csrf = s.csrf; state.accounts = s.accounts; state.services = s.services;
  state.account = state.account && s.accounts.includes(state.account) ? state.account : s.accounts[0];
  const sel = document.getElementById('account');
  sel.replaceChildren(...s.accounts.map(a => el('option', { value: a, text: a })));
  sel.value = state.account;
  sel.onchange = () => { state.account = sel.value; route(); };
  const out = document.getElementById('logout');
  out.hidden = false;
  out.onclick = async () => { await api('POST', '/api/logout'); showLogin(); };
  route();
}

function route() {
  clearInterval(state.timer);
  setStatus('');
  const h = decodeURIComponent(location.hash.slice(1)) || 'tables';
  const [view, ...args] = h.split('/');
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.view === view || a.dataset.view === view + 's');
  const main = document.getElementById('main');
  main.replaceChildren();
  const views = { tables: viewTables, table: viewEntities, partitions: viewPartitions, server: viewServer, queues: viewQueues, blobs: viewBlobs, blob: viewBlob };
  (views[view] || viewTables)(main, args.join('/')).catch(e => setStatus(e.message, true));
}
window.addEventListener('hashchange', route);

// ---- Tables ----

async function viewTables(main) {
  const list = el('table', { class: 'grid', id: 'tables' }, el('tr', {}, el('th', { text: 'Table' }), el('th', { text: '' })));
  const name = el('input', { id: 'new-table', placeholder: 'new table name' });
  main.append(el('h2', { text: 'Tables in ' + state.account }),
    el('form', { class: 'toolbar', onsubmit: async (ev) => {
      ev.preventDefault();
      const r = await api('POST', tablePath('Tables'), { headers: { 'Content-Type': 'application/json', Accept: 'application/json;odata=nometadata', Prefer: 'return-no-content' }, body: JSON.stringify({ TableName: name.value }) });
      if (!r.ok) { setStatus(await errorText(r), true); return; }
      const made = name.value; route(); setStatus('Created ' + made);
    } }, name, el('button', { type: 'submit', text: 'Create table' })), list);
  let next = '';
  do {
    const r = await api('GET', tablePath('Tables') + (next ? '?NextTableName=' + encodeURIComponent(next) : ''), { headers: { Accept: 'application/json;odata=nometadata' } });
    if (!r.ok) { setStatus(await errorText(r), true); return; }
    for (const t of (await r.json()).value) {
      list.append(el('tr', {}, el('td', {}, el('a', { href: '#table/' + encodeURIComponent(t.TableName), text: t.TableName })),
        el('td', {}, el('button', { class: 'delete-table', onclick: async () => {
          if (!confirm('Delete table ' + t.TableName + '?')) return;
          const d = await api('DELETE', tablePath("Tables('" + encodeURIComponent(t.TableName) + "')"));
          if (!d.ok) { setStatus(await errorText(d), true); return; }
          route(); setStatus('Deleted ' + t.TableName);
        } }, 'Delete'))));
    }
    next = r.headers.get('x-ms-continuation-NextTableName') || '';
  } while (next);
}

// edmType is a property's EDM type in an odata=fullmetadata entity.
function edmType(ent, name) {
  const t = ent[name + '@odata.type'];
  if (t) return t;
  const v = ent[name];
  if (typeof v === 'boolean') return 'Edm.Boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'Edm.Int32' : 'Edm.Double';
  return 'Edm.String';
}
function propNames(ent) { return Object.keys(ent).filter(k => !k.includes('@') && !k.startsWith('odata.')); }

// parsePlan splits x-tablo-query-plan into its parts.
function parsePlan(h) {
  const out = { raw: h || '', kind: '', keys: '', ranges: '', scanned: '', returned: '' };
  if (!h) return out;
  const parts = h.split('; ');
  const first = parts.shift();
  const sp = first.indexOf(' ');
  out.kind = sp < 0 ? first : first.slice(0, sp);
  out.keys = sp < 0 ? '' : first.slice(sp + 1);
  for (const p of parts) {
    const eq = p.indexOf('=');
    if (eq > 0) out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}

async function viewEntities(main, table) {
  const q = { filter: el('input', { id: 'q-filter', class: 'wide', placeholder: "$filter, e.g. PartitionKey eq 'a' and Price gt 10" }),
    select: el('input', { id: 'q-select', placeholder: '$select, e.g. Name,Price' }),
    top: el('input', { id: 'q-top', type: 'number', min: '1', max: '1000', placeholder: '$top (page size)' }) };
  const grid = el('table', { class: 'grid', id: 'entities' });
  const plan = el('dl', { class: 'plan', id: 'plan' });
  const pageInfo = el('span', { id: 'page-info', class: 'muted' });
  const editor = el('div', { id: 'editor-slot' });
  const page = { tokens: [], next: null, rows: [], cols: [] }; // tokens: the continuation of each page shown
  const nextBtn = el('button', { id: 'next-page', onclick: () => load(page.next, page.tokens.length + 1) }, 'Next page');
  const prevBtn = el('button', { id: 'prev-page', onclick: () => load(page.tokens[page.tokens.length - 2], page.tokens.length - 1) }, 'Previous page');

  async function load(token, n) {
    const ps = [];
    if (q.filter.value) ps.push('$filter=' + encodeURIComponent(q.filter.value));
    if (q.select.value) ps.push('$select=' + encodeURIComponent(q.select.value));
    if (q.top.value) ps.push('$top=' + encodeURIComponent(q.top.value));
    if (token) ps.push('NextPartitionKey=' + encodeURIComponent(token.pk), ...(token.rk ? ['NextRowKey=' + encodeURIComponent(token.rk)] : []));
    const t0 = performance.now();
    const r = await api('GET', tablePath(encodeURIComponent(table) + '()') + (ps.length ? '?' + ps.join('&') : ''), { headers: { Accept: 'application/json;odata=fullmetadata' } });
    const ms = performance.now() - t0;
    if (!r.ok) { setStatus(await errorText(r), true); return; }
    const body = await r.json();
    const npk = r.headers.get('x-ms-continuation-NextPartitionKey');
    page.next = npk ? { pk: npk, rk: r.headers.get('x-ms-continuation-NextRowKey') || '' } : null;
    page.tokens = page.tokens.slice(0, n - 1); page.tokens[n - 1] = token || null;
    page.rows = body.value;
    render(body.value);
    const p = parsePlan(r.headers.get('x-tablo-query-plan'));
    plan.replaceChildren(
      el('dt', { text: 'Plan kind' }), el('dd', { id: 'plan-kind', text: p.kind }),
      el('dt', { text: 'Key ranges' }), el('dd', { id: 'plan-keys', text: p.keys || '(whole table)' }),
      el('dt', { text: 'Range partitions touched' }), el('dd', { id: 'plan-ranges', text: p.ranges || '-' }),
      el('dt', { text: 'Scanned / returned' }), el('dd', { id: 'plan-counts', text: p.scanned + ' / ' + p.returned }),
      el('dt', { text: 'Time' }), el('dd', { id: 'plan-time', text: (r.headers.get('x-console-elapsed-ms') || '?') + ' ms at the service, ' + ms.toFixed(1) + ' ms in the browser' }),
      el('dt', { text: 'Header' }), el('dd', { id: 'plan-raw', text: p.raw }));
    pageInfo.textContent = 'Page ' + n + ': ' + body.value.length + ' entities' + (page.next ? ', more follow' : ', last page');
    nextBtn.disabled = !page.next; prevBtn.disabled = n <= 1;
  }

  function render(rows) {
    const cols = [];
    const types = {};
    for (const e of rows) for (const k of propNames(e)) {
      if (!(k in types)) { cols.push(k); types[k] = new Set(); }
      types[k].add(edmType(e, k));
    }
    const order = ['PartitionKey', 'RowKey', 'Timestamp'];
    cols.sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99) || a.localeCompare(b));
    page.cols = cols;
    grid.replaceChildren(el('tr', {}, el('th', { text: '' }), cols.map(c => el('th', { 'data-col': c }, c, el('small', { text: [...types[c]].join(' | ') })))));
    for (const e of rows) {
      grid.append(el('tr', { 'data-pk': e.PartitionKey, 'data-rk': e.RowKey },
        el('td', {}, el('button', { class: 'edit', onclick: () => openEditor(e) }, 'Edit'), ' ',
          el('button', { class: 'delete', onclick: () => del(e) }, 'Delete')),
        cols.map(c => el('td', { 'data-col': c, title: c in e ? edmType(e, c) : '' }, c in e ? String(e[c]) : ''))));
    }
  }

  async function del(e) {
    if (!confirm('Delete entity ' + e.PartitionKey + ' / ' + e.RowKey + '?')) return;
    const r = await api('DELETE', entityPath(table, e.PartitionKey, e.RowKey), { headers: { 'If-Match': e['odata.etag'] || '*' } });
    if (r.status === 412) { setStatus('ETag conflict: the entity changed since this page was loaded; reload it and retry', true); return; }
    if (!r.ok) { setStatus(await errorText(r), true); return; }
    setStatus('Deleted'); load(page.tokens[page.tokens.length - 1], page.tokens.length);
  }

  function openEditor(ent) {
    const isNew = !ent;
    ent = ent || {};
    const props = el('tbody', {});
    const addRow = (name, type, value) => {
      const typeSel = el('select', { class: 'p-type' }, EDM.map(t => el('option', { value: t, text: t })));
      typeSel.value = type;
      const tr = el('tr', { class: 'prop' }, el('td', {}, el('input', { class: 'p-name', value: name })), el('td', {}, typeSel),
        el('td', {}, el('input', { class: 'p-value', value: value == null ? '' : String(value) })),
        el('td', {}, el('button', { type: 'button', onclick: () => tr.remove() }, 'Remove')));
      props.append(tr);
    };
    for (const k of propNames(ent)) if (!['PartitionKey', 'RowKey', 'Timestamp'].includes(k)) addRow(k, edmType(ent, k), ent[k]);
    if (isNew) addRow('', 'Edm.String', '');
    const pk = el('input', { id: 'e-pk', value: ent.PartitionKey || '', disabled: !isNew });
    const rk = el('input', { id: 'e-rk', value: ent.RowKey || '', disabled: !isNew });
    const mode = el('select', { id: 'e-mode' }, (isNew ? ['insert'] : ['replace', 'merge']).map(m => el('option', { value: m, text: m })));
    const msg = el('p', { id: 'e-msg' });
    const etag = ent['odata.etag'] || '';
    const form = el('form', { class: 'editor', id: 'editor', onsubmit: async (ev) => {
      ev.preventDefault();
      const body = { PartitionKey: pk.value, RowKey: rk.value };
      for (const tr of props.querySelectorAll('tr.prop')) {
        const n = tr.querySelector('.p-name').value, t = tr.querySelector('.p-type').value, v = tr.querySelector('.p-value').value;
        if (!n) continue;
        try { body[n] = typed(t, v); } catch (e) { msg.className = 'error'; msg.textContent = n + ': ' + e.message; return; }
        if (!['Edm.String', 'Edm.Int32', 'Edm.Boolean'].includes(t)) body[n + '@odata.type'] = t;
      }
      const headers = { 'Content-Type': 'application/json', Accept: 'application/json;odata=nometadata', Prefer: 'return-no-content' };
      let r;
      if (isNew) r = await api('POST', tablePath(encodeURIComponent(table)), { headers, body: JSON.stringify(body) });
      else r = await api(mode.value === 'merge' ? 'MERGE' : 'PUT', entityPath(table, pk.value, rk.value), { headers: Object.assign(headers, { 'If-Match': etag || '*' }), body: JSON.stringify(body) });
      if (r.status === 412) {
        msg.className = 'conflict';
        msg.textContent = 'ETag conflict (412 ' + (await errorText(r)).split(':')[0] + '): someone changed this entity after you loaded it. Reload the page to see the current version.';
        return;
      }
      if (!r.ok) { msg.className = 'error'; msg.textContent = await errorText(r); return; }
      editor.replaceChildren();
      setStatus(isNew ? 'Inserted' : 'Saved (' + mode.value + ')');
      load(page.tokens[page.tokens.length - 1], Math.max(page.tokens.length, 1));
    } }, el('h3', { text: isNew ? 'New entity' : 'Edit entity' }),
    el('div', { class: 'toolbar' }, 'PartitionKey', pk, 'RowKey', rk, 'Mode', mode, etag ? el('span', { class: 'muted', id: 'e-etag', text: 'ETag ' + etag }) : null),
    el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, ['Property', 'EDM type', 'Value', ''].map(h => el('th', { text: h })))), props),
    el('div', { class: 'toolbar' }, el('button', { type: 'button', id: 'add-prop', onclick: () => addRow('', 'Edm.String', '') }, 'Add property'),
      el('button', { type: 'submit', id: 'save' }, 'Save'), el('button', { type: 'button', onclick: () => editor.replaceChildren() }, 'Cancel')), msg);
    editor.replaceChildren(form);
  }

  function exportPage(fmt) {
    const rows = page.rows.map(e => Object.fromEntries(page.cols.filter(c => c in e).map(c => [c, e[c]])));
    let text, type;
    if (fmt === 'json') { text = JSON.stringify(rows, null, 2); type = 'application/json'; }
    else {
      const q = v => { const s = v == null ? '' : String(v); return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s; };
      text = [page.cols.map(q).join(','), ...rows.map(r => page.cols.map(c => q(r[c])).join(','))].join('\r\n') + '\r\n';
      type = 'text/csv';
    }
    const a = el('a', { href: URL.createObjectURL(new Blob([text], { type })), download: table + '.' + fmt });
    document.body.append(a); a.click(); a.remove();
  }

  main.append(el('h2', {}, el('a', { href: '#tables', text: 'Tables' }), ' / ', table),
    el('form', { class: 'toolbar', id: 'query', onsubmit: (ev) => { ev.preventDefault(); editor.replaceChildren(); load(null, 1); } },
      q.filter, q.select, q.top, el('button', { type: 'submit', id: 'run' }, 'Run query')),
    el('div', { class: 'toolbar' }, prevBtn, nextBtn, pageInfo,
      el('button', { id: 'new-entity', onclick: () => openEditor(null) }, 'New entity'),
      el('button', { id: 'export-json', onclick: () => exportPage('json') }, 'Export JSON'),
      el('button', { id: 'export-csv', onclick: () => exportPage('csv') }, 'Export CSV')),
    editor, el('div', { class: 'split' }, el('div', {}, grid), plan));
  await load(null, 1);
}

// typed converts an editor value to its JSON form for the EDM type.
function typed(t, v) {
  switch (t) {
    case 'Edm.Int32': { const n = Number(v); if (!Number.isInteger(n) || n < -2147483648 || n > 2147483647) throw new Error('not an Int32'); return n; }
    case 'Edm.Int64': if (!/^-?\d+$/.test(v)) throw new Error('not an Int64'); return v;
    case 'Edm.Double': { const n = Number(v); if (v.trim() === '' || Number.isNaN(n)) throw new Error('not a Double'); return n; }
    case 'Edm.Boolean': if (v !== 'true' && v !== 'false') throw new Error('true or false'); return v === 'true';
    case 'Edm.DateTime': { const d = new Date(v); if (Number.isNaN(d.getTime())) throw new Error('not a date'); return d.toISOString(); }
    default: return v;
  }
}

// ---- Partitions ----

function heatColor(x) { // 0..1 -> white..red
  const f = Math.max(0, Math.min(1, x));
  const g = Math.round(255 - 200 * f);
  return 'rgb(255,' + g + ',' + g + ')';
}

async function viewPartitions(main) {
  const pick = el('select', { id: 'p-table' });
  const body = el('div', { id: 'p-body' });
  const stamp = el('span', { id: 'p-time', class: 'muted' });
  main.append(el('h2', { text: 'Partitions' }), el('div', { class: 'toolbar' }, 'Table', pick, stamp), body);
  let chosen = '';
  pick.onchange = () => { chosen = pick.value; tick(); };
  async function tick() {
    let r;
    try { r = await api('GET', '/api/partitions?top=20'); } catch (e) { return; }
    if (!r.ok) { body.replaceChildren(el('p', { class: 'error', text: await errorText(r) })); return; }
    const s = await r.json();
    stamp.textContent = 'updated ' + s.time + ' (rates over ' + s.window + ')';
    const tables = (s.tables || []).filter(t => t.account === state.account);
    const names = tables.map(t => t.service + ':' + t.name);
    if (pick.options.length !== names.length || names.some((n, i) => pick.options[i].value !== n)) {
      pick.replaceChildren(...names.map(n => el('option', { value: n, text: n })));
    }
    if (!names.includes(chosen)) chosen = names[0] || '';
    pick.value = chosen;
    const t = tables.find(x => x.service + ':' + x.name === chosen);
    const target = s.targets.partitionEntitiesPerSec || 2000;
    const busy = el('p', { id: 'p-busy' }, 'ServerBusy: ', Object.entries(s.serverBusy || {}).map(([k, v]) => k + '=' + v).join(', ') || 'none',
      ' · faults injected: ', Object.entries(s.faults.injected || {}).map(([k, v]) => k + '=' + v).join(', '), ' (spec: ', s.faults.spec || 'none', ')');
    if (!t) { body.replaceChildren(el('p', { class: 'muted', text: 'No load seen yet on this account.' }), busy); return; }
    const rate = x => x.rates.readEntitiesPerSec + x.rates.writeEntitiesPerSec;
    const heat = el('div', { class: 'heat', id: 'heat' }, (t.ranges || []).map(g => el('div', {
      class: 'cell range' + (g.offline ? ' offline' : ''), 'data-rate': rate(g).toFixed(1), style: 'background:' + heatColor(rate(g) / target),
      title: 'PartitionKeys from ' + JSON.stringify(g.low) + (g.high ? ' to ' + JSON.stringify(g.high) : ' to the end'),
    }, el('b', { text: g.name }), el('br'), rate(g).toFixed(0) + ' ent/s', el('br'), 'from ' + JSON.stringify(g.low))));
    const maxRate = Math.max(1, ...t.partitions.map(rate));
    const hot = el('table', { class: 'grid', id: 'hottest' }, el('tr', {}, ['PartitionKey', 'entities/s', '', 'count', 'hot'].map(h => el('th', { text: h }))),
      t.partitions.map(p => el('tr', { 'data-pk': p.partitionKey }, el('td', { text: p.partitionKey }), el('td', { class: 'rate', text: rate(p).toFixed(1) }),
        el('td', {}, el('span', { class: 'bar', style: 'width:' + Math.round(200 * rate(p) / maxRate) + 'px' })),
        el('td', { text: (p.exact ? '' : '≤') + p.count }), el('td', { text: p.hot ? 'HOT' : '' }))));
    body.replaceChildren(
      el('p', {}, 'Reads ' + t.rates.readEntitiesPerSec.toFixed(1) + ' ent/s, writes ' + t.rates.writeEntitiesPerSec.toFixed(1) +
        ' ent/s, busy ' + t.rates.busyPerSec.toFixed(1) + '/s, p50 ' + t.latencyP50 + ', p99 ' + t.latencyP99 + ', 5xx ' + t.errors5xx),
      el('h3', { text: 'Range partitions (colour: entities/s against the ' + target + '/s partition target)' }), heat,
      el('h3', { text: 'Hottest PartitionKeys' }), hot, busy);
  }
  await tick();
  state.timer = setInterval(tick, 1000);
}

// ---- Server ----

async function viewServer(main) {
  const r = await api('GET', '/api/server');
  if (!r.ok) { setStatus(await errorText(r), true); return; }
  const s = await r.json();
  const up = s.uptimeSeconds;
  main.append(el('h2', { text: 'Server' }),
    el('table', { class: 'grid', id: 'server-facts' },
      [['Version', s.version], ['Engine', s.engine], ['Go', s.go], ['Started', s.started],
        ['Uptime', Math.floor(up / 3600) + 'h ' + Math.floor(up % 3600 / 60) + 'm ' + up % 60 + 's'], ['Table endpoint', s.tableEndpoint || 'not served'], ['Queue endpoint', s.queueEndpoint || 'not served'], ['Blob endpoint', s.blobEndpoint || 'not served']]
        .map(([k, v]) => el('tr', {}, el('th', { text: k }), el('td', { text: v })))),
    el('h3', { text: 'Accounts' }),
    ...s.accounts.map(a => el('div', { class: 'account' }, el('h4', { text: a.name }),
      el('p', { text: a.requestsPerSec.toFixed(1) + ' requests/s now, ' + a.requests + ' since start' }),
      el('code', { class: 'copy', text: a.connectionString }), ' ',
      el('button', { onclick: () => navigator.clipboard.writeText(a.connectionString).then(() => setStatus('Copied')) }, 'Copy'),
      a.keyShown ? null : el('p', { class: 'muted', text: 'The key is never sent to the browser: put the account key in place of <account key>.' }))));
}

// ---- Queues: shown when the server mounts the service ----

function queuePath(rest) { return '/api/queue/' + encodeURIComponent(state.account) + (rest ? '/' + rest : ''); }
function xmlDoc(text) { return new DOMParser().parseFromString(text, 'application/xml'); }
function xmlText(s) { return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'); }

async function viewQueues(main, queue) {
  if (!state.services.includes('queue')) { notServed(main, 'queue', 'Queues'); return; }
  if (queue) { await viewQueue(main, queue); return; }
  const list = el('table', { class: 'grid', id: 'queues' }, el('tr', {}, el('th', { text: 'Queue' }), el('th', { text: '' })));
  const name = el('input', { id: 'new-queue', placeholder: 'new queue name' });
  main.append(el('h2', { text: 'Queues in ' + state.account }),
    el('form', { class: 'toolbar', onsubmit: async (ev) => {
      ev.preventDefault();
      const r = await api('PUT', queuePath(encodeURIComponent(name.value)));
      if (!r.ok) { setStatus(await errorText(r), true); return; }
      const made = name.value; route(); setStatus('Created ' + made);
    } }, name, el('button', { type: 'submit', text: 'Create queue' })), list);
  let marker = '';
  do {
    const r = await api('GET', queuePath('') + '?comp=list' + (marker ? '&marker=' + encodeURIComponent(marker) : ''));
    if (!r.ok) { setStatus(await errorText(r), true); return; }
    const doc = xmlDoc(await r.text());
    for (const q of doc.querySelectorAll('Queue > Name')) {
      const n = q.textContent;
      list.append(el('tr', {}, el('td', {}, el('a', { href: '#queues/' + encodeURIComponent(n), text: n })),
        el('td', {}, el('button', { class: 'delete-queue', onclick: async () => {
          if (!confirm('Delete queue ' + n + '?')) return;
          const d = await api('DELETE', queuePath(encodeURIComponent(n)));
          if (!d.ok) { setStatus(await errorText(d), true); return; }
          route(); setStatus('Deleted ' + n);
        } }, 'Delete'))));
    }
    marker = (doc.querySelector('NextMarker') || {}).textContent || '';
  } while (marker);
}

async function viewQueue(main, queue) {
  const msgs = el('table', { class: 'grid', id: 'messages' });
  const taken = el('div', { id: 'taken' });
  const text = el('input', { id: 'msg-text', class: 'wide', placeholder: 'message text' });
  const mpath = queuePath(encodeURIComponent(queue) + '/messages');
  const cols = ['MessageId', 'InsertionTime', 'ExpirationTime', 'DequeueCount', 'MessageText'];
  async function peek() {
    const r = await api('GET', mpath + '?peekonly=true&numofmessages=32');
    if (!r.ok) { setStatus(await errorText(r), true); return; }
    const doc = xmlDoc(await r.text());
    const rows = [...doc.querySelectorAll('QueueMessage')];
    msgs.replaceChildren(el('tr', {}, cols.map(c => el('th', { text: c }))),
      ...rows.map(m => el('tr', { class: 'message' }, cols.map(c => el('td', { 'data-col': c, text: (m.querySelector(c) || {}).textContent || '' })))));
    document.getElementById('peek-info').textContent = rows.length + ' message(s) visible (peek shows up to 32)';
  }
  main.append(el('h2', {}, el('a', { href: '#queues', text: 'Queues' }), ' / ', queue),
    el('form', { class: 'toolbar', onsubmit: async (ev) => {
      ev.preventDefault();
      const r = await api('POST', mpath, { headers: { 'Content-Type': 'application/xml' }, body: '<QueueMessage><MessageText>' + xmlText(text.value) + '</MessageText></QueueMessage>' });
      if (!r.ok) { setStatus(await errorText(r), true); return; }
      setStatus('Put'); text.value = ''; peek();
    } }, text, el('button', { type: 'submit', id: 'put' }, 'Put message')),
    el('div', { class: 'toolbar' }, el('button', { id: 'peek', onclick: peek }, 'Peek'),
      el('button', { id: 'dequeue', onclick: async () => {
        const r = await api('GET', mpath + '?numofmessages=1&visibilitytimeout=30');
        if (!r.ok) { setStatus(await errorText(r), true); return; }
        const m = xmlDoc(await r.text()).querySelector('QueueMessage');
        if (!m) { taken.replaceChildren(el('p', { class: 'muted', text: 'No visible message.' })); return; }
        const get = c => (m.querySelector(c) || {}).textContent || '';
        const id = get('MessageId'), receipt = get('PopReceipt');
        taken.replaceChildren(el('p', {}, 'Dequeued (invisible for 30 s): ', el('code', { id: 'taken-text', text: get('MessageText') }), ' ',
          el('button', { id: 'delete-taken', onclick: async () => {
            const d = await api('DELETE', mpath + '/' + encodeURIComponent(id) + '?popreceipt=' + encodeURIComponent(receipt));
            if (!d.ok) { setStatus(await errorText(d), true); return; }
            taken.replaceChildren(); setStatus('Deleted message ' + id); peek();
          } }, 'Delete it')));
        peek();
      } }, 'Dequeue one'), el('span', { id: 'peek-info', class: 'muted' })),
    taken, msgs);
  await peek();
}
// ---- Blobs ----

// blobPath is the console's path of an account, container or blob: each name part escaped,
// the "/" inside a blob name kept (the Blob service treats %2F and / alike).
function blobPath(container, name) {
  let p = '/api/blob/' + encodeURIComponent(state.account);
  if (container) p += '/' + encodeURIComponent(container);
  if (name) p += '/' + name.split('/').map(encodeURIComponent).join('/');
  return p;
}
function blobHash(view, container, rest) {
  return '#' + view + '/' + encodeURIComponent(container) + (rest ? '/' + rest.split('/').map(encodeURIComponent).join('/') : '');
}
function xmlGet(node, sel) { return (node.querySelector(sel) || {}).textContent || ''; }
function formatSize(n) {
  n = Number(n);
  if (n < 1024) return n + ' B';
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let i = -1;
  do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
  return n.toFixed(1) + ' ' + u[i];
}

async function viewBlobs(main, arg) {
  if (!state.services.includes('blob')) { notServed(main, 'blob', 'Blobs'); return; }
  if (arg) {
    const slash = arg.indexOf('/');
    await viewFolder(main, slash < 0 ? arg : arg.slice(0, slash), slash < 0 ? '' : arg.slice(slash + 1));
    return;
  }
  const list = el('table', { class: 'grid', id: 'containers' }, el('tr', {}, ['Container', 'Last modified', 'Public access', ''].map(h => el('th', { text: h }))));
  const name = el('input', { id: 'new-container', placeholder: 'new container name' });
  main.append(el('h2', { text: 'Containers in ' + state.account }),
    el('form', { class: 'toolbar', onsubmit: async (ev) => {
      ev.preventDefault();
      const r = await api('PUT', blobPath(name.value) + '?restype=container');
      if (!r.ok) { setStatus(await errorText(r), true); return; }
      const made = name.value; route(); setStatus('Created ' + made);
    } }, name, el('button', { type: 'submit', text: 'Create container' })), list);
  let marker = '';
  do {
    const r = await api('GET', blobPath() + '?comp=list' + (marker ? '&marker=' + encodeURIComponent(marker) : ''));
    if (!r.ok) { setStatus(await errorText(r), true); return; }
    const doc = xmlDoc(await r.text());
    for (const c of doc.querySelectorAll('Containers > Container')) {
      const n = xmlGet(c, 'Name');
      list.append(el('tr', { 'data-container': n }, el('td', {}, el('a', { href: blobHash('blobs', n, ''), text: n })),
        el('td', { text: xmlGet(c, 'Properties > Last-Modified') }), el('td', { text: xmlGet(c, 'Properties > PublicAccess') || 'private' }),
        el('td', {}, el('button', { class: 'delete-container', onclick: async () => {
          if (!confirm('Delete container ' + n + ' and every blob in it?')) return;
          const d = await api('DELETE', blobPath(n) + '?restype=container');
          if (!d.ok) { setStatus(await errorText(d), true); return; }
          route(); setStatus('Deleted ' + n);
        } }, 'Delete'))));
    }
    marker = xmlGet(doc, 'EnumerationResults > NextMarker');
  } while (marker);
}

// breadcrumbs links the container and each folder of prefix.
function breadcrumbs(container, prefix, last) {
  const out = [el('a', { href: '#blobs', text: 'Containers' }), ' / ', el('a', { href: blobHash('blobs', container, ''), text: container })];
  const parts = prefix.split('/').filter((p, i, a) => i < a.length - 1 || p !== '');
  let acc = '';
  for (const p of parts) {
    acc += p + '/';
    out.push(' / ', el('a', { href: blobHash('blobs', container, acc), text: p }));
  }
  if (last) out.push(' / ', last);
  return el('h2', { id: 'breadcrumbs' }, out);
}

// viewFolder lists one level of a container (delimiter "/") page by page, by marker.
async function viewFolder(main, container, prefix) {
  const grid = el('table', { class: 'grid', id: 'blobs' });
  const pageInfo = el('span', { id: 'blob-page-info', class: 'muted' });
  const size = el('input', { id: 'blob-page-size', type: 'number', min: '1', max: '5000', value: '100', title: 'entries per page' });
  const page = { markers: [''], n: 1, next: '' };
  const nextBtn = el('button', { id: 'blob-next', onclick: () => { page.markers[page.n] = page.next; page.n++; load(); } }, 'Next page');
  const prevBtn = el('button', { id: 'blob-prev', onclick: () => { page.n--; load(); } }, 'Previous page');
  const file = el('input', { id: 'upload-file', type: 'file' });
  const upName = el('input', { id: 'upload-name', placeholder: 'blob name (default: the file name)' });
  const meta = el('input', { id: 'upload-meta', placeholder: 'metadata: key=value, key2=value2' });

  async function load() {
    const ps = ['restype=container', 'comp=list', 'delimiter=%2F', 'include=metadata', 'maxresults=' + encodeURIComponent(size.value || '100')];
    if (prefix) ps.push('prefix=' + encodeURIComponent(prefix));
    const marker = page.markers[page.n - 1];
    if (marker) ps.push('marker=' + encodeURIComponent(marker));
    const r = await api('GET', blobPath(container) + '?' + ps.join('&'));
    if (!r.ok) { setStatus(await errorText(r), true); return; }
    const doc = xmlDoc(await r.text());
    // Folders (BlobPrefix) and blobs come interleaved in name order: keep the service's order.
    const rows = [...((doc.querySelector('EnumerationResults > Blobs') || {}).children || [])].map(b => {
      const n = xmlGet(b, 'Name');
      if (b.tagName === 'BlobPrefix') {
        return el('tr', { class: 'folder', 'data-name': n }, el('td', {}, el('a', { href: blobHash('blobs', container, n), text: n.slice(prefix.length) })),
          el('td', { text: 'folder' }), el('td'), el('td'), el('td'), el('td'));
      }
      const md = [...((b.querySelector('Metadata') || {}).children || [])].map(m => m.tagName + '=' + m.textContent).join(', ');
      return el('tr', { class: 'blob', 'data-name': n }, el('td', {}, el('a', { href: blobHash('blob', container, n), text: n.slice(prefix.length) })),
        el('td', { text: xmlGet(b, 'Properties > BlobType') }), el('td', { class: 'size', text: formatSize(xmlGet(b, 'Properties > Content-Length')) }),
        el('td', { text: xmlGet(b, 'Properties > Content-Type') }), el('td', { text: xmlGet(b, 'Properties > Last-Modified') }), el('td', { class: 'meta', text: md }));
    });
    grid.replaceChildren(el('tr', {}, ['Name', 'Type', 'Size', 'Content type', 'Last modified', 'Metadata'].map(h => el('th', { text: h }))), ...rows);
    page.next = xmlGet(doc, 'EnumerationResults > NextMarker');
    pageInfo.textContent = 'Page ' + page.n + ': ' + rows.length + ' entries' + (page.next ? ', more follow' : ', last page');
    nextBtn.disabled = !page.next; prevBtn.disabled = page.n <= 1;
  }

  main.append(breadcrumbs(container, prefix),
    el('form', { class: 'toolbar', id: 'upload', onsubmit: async (ev) => {
      ev.preventDefault();
      const f = file.files[0];
      if (!f) { setStatus('Choose a file to upload', true); return; }
      const name = prefix + (upName.value || f.name);
      const headers = { 'x-ms-blob-type': 'BlockBlob', 'x-ms-blob-content-type': f.type || 'application/octet-stream' };
      const md = new URLSearchParams();
      for (const kv of meta.value.split(',')) {
        const eq = kv.indexOf('=');
        if (eq > 0) md.append(kv.slice(0, eq).trim(), kv.slice(eq + 1).trim());
      }
      if ([...md].length) headers['x-console-metadata'] = md.toString();
      setStatus('Uploading ' + name + ' (' + formatSize(f.size) + ')');
      const r = await api('PUT', blobPath(container, name), { headers, body: f });
      if (!r.ok) { setStatus(await errorText(r), true); return; }
      upName.value = ''; meta.value = ''; file.value = '';
      setStatus('Uploaded ' + name); load();
    } }, 'Upload to this folder', file, upName, meta, el('button', { type: 'submit', id: 'upload-go' }, 'Upload')),
    el('div', { class: 'toolbar' }, prevBtn, nextBtn, pageInfo, 'Page size', size), grid);
  size.onchange = () => { page.markers = ['']; page.n = 1; load(); };
  await load();
}

// viewBlob shows one blob's properties and metadata, with download, metadata edit and delete.
async function viewBlob(main, arg) {
  if (!state.services.includes('blob')) { notServed(main, 'blob', 'Blobs'); return; }
  const slash = arg.indexOf('/');
  const container = arg.slice(0, slash), name = arg.slice(slash + 1);
  const folder = name.slice(0, name.lastIndexOf('/') + 1);
  const r = await api('HEAD', blobPath(container, name));
  if (!r.ok) { main.append(breadcrumbs(container, folder, name.slice(folder.length))); setStatus(r.status === 404 ? 'BlobNotFound: no blob ' + name : r.status + ' ' + r.statusText, true); return; }
  const h = r.headers;
  const props = [['Name', name], ['Blob type', h.get('x-ms-blob-type')], ['Size', formatSize(h.get('Content-Length') || 0) + ' (' + (h.get('Content-Length') || 0) + ' bytes)'],
    ['Content type', h.get('x-console-Content-Type')], ['Content encoding', h.get('x-console-Content-Encoding')], ['Content language', h.get('x-console-Content-Language')],
    ['Content disposition', h.get('x-console-Content-Disposition')], ['Cache control', h.get('x-console-Cache-Control')], ['Content-MD5', h.get('Content-MD5')],
    ['ETag', h.get('ETag')], ['Last modified', h.get('Last-Modified')], ['Created', h.get('x-ms-creation-time')], ['Access tier', h.get('x-ms-access-tier')],
    ['Lease state', h.get('x-ms-lease-state')]];
  const metaRows = el('tbody', { id: 'meta-rows' });
  function addMeta(k, v) {
    metaRows.append(el('tr', { class: 'meta' }, el('td', {}, el('input', { class: 'm-name', value: k })), el('td', {}, el('input', { class: 'm-value wide', value: v })),
      el('td', {}, el('button', { type: 'button', onclick: (ev) => ev.target.closest('tr').remove() }, 'Remove'))));
  }
  for (const [k, v] of h) if (k.startsWith('x-ms-meta-')) addMeta(k.slice(10), v);
  const base = name.slice(folder.length);
  main.append(breadcrumbs(container, folder, base),
    el('div', { class: 'toolbar' },
      el('a', { id: 'download', href: blobPath(container, name), download: base }, 'Download'),
      el('button', { id: 'delete-blob', onclick: async () => {
        if (!confirm('Delete blob ' + name + ' and its snapshots?')) return;
        const d = await api('DELETE', blobPath(container, name), { headers: { 'x-ms-delete-snapshots': 'include' } });
        if (!d.ok) { setStatus(await errorText(d), true); return; }
        location.hash = blobHash('blobs', container, folder); setStatus('Deleted ' + name);
      } }, 'Delete')),
    el('table', { class: 'grid', id: 'blob-props' }, props.map(([k, v]) => el('tr', {}, el('th', { text: k }), el('td', { 'data-prop': k, text: v || '' })))),
    el('h3', { text: 'Metadata' }),
    el('form', { id: 'meta-form', onsubmit: async (ev) => {
      ev.preventDefault();
      const md = new URLSearchParams();
      for (const tr of metaRows.querySelectorAll('tr.meta')) {
        const k = tr.querySelector('.m-name').value.trim();
        if (k) md.append(k, tr.querySelector('.m-value').value);
      }
      // Metadata travels form-encoded in one header (names keep their case; see the back end).
      const s = await api('PUT', blobPath(container, name) + '?comp=metadata', { headers: { 'x-console-metadata': md.toString() } });
      if (!s.ok) { setStatus(await errorText(s), true); return; }
      setStatus('Saved metadata');
    } }, el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, ['Name', 'Value', ''].map(x => el('th', { text: x })))), metaRows),
    el('div', { class: 'toolbar' }, el('button', { type: 'button', id: 'add-meta', onclick: () => addMeta('', '') }, 'Add'), el('button', { type: 'submit', id: 'save-meta' }, 'Save metadata'))));
}
function notServed(main, svc, title) {
  main.append(el('h2', { text: title }), el('p', { class: 'muted', id: 'not-served',
    text: state.services.includes(svc) ? title + ' are served, but this console build has no view for them yet.' : 'This server does not serve the ' + svc + ' service.' }));
}

start();
