// The console's shell: sign-in, the org and GVC pickers, the kinds, and the hash router. A
// route is the API path of what is shown (`#/org/acme/gvc/main/workload/web`): a list for a
// collection path, an item otherwise.

import { REFUSED, call, describe, get } from './api.js';
import { h, replace } from './dom.js';
import { renderItem } from './item.js';
import { renderList } from './list.js';
import { chooseGvc, chosenGvc, currentKey, forget, remember } from './session.js';

const $ = (id) => document.getElementById(id);
const state = { kinds: null, orgs: [], org: null, gvcs: [], gvcOrg: null };

const notice = {
  show(text) {
    $('notice').textContent = text;
    $('notice').hidden = false;
  },
  clear() {
    $('notice').textContent = '';
    $('notice').hidden = true;
  },
};

const segment = (value) => encodeURIComponent(value);

/** What a hash route shows: `{view: 'list' | 'item', path, kind, gvc, name, org}`. */
function parseRoute(hash) {
  const parts = hash.replace(/^#/, '').split('/').slice(1).map((p) => { try { return decodeURIComponent(p); } catch { return p; } });
  if (parts[0] !== 'org') return null;
  const org = parts[1];
  const kindOf = (name) => (state.kinds || []).find((k) => k.name === name);
  const path = '/' + parts.map(segment).join('/');
  if (parts.length === 1) return { view: 'list', path: '/org', kind: kindOf('org'), org: null };
  if (parts.length === 2) return { view: 'item', path, kind: kindOf('org'), org, name: org };
  if (parts.length === 3) return { view: 'list', path, kind: kindOf(parts[2]), org };
  if (parts.length === 4) return { view: 'item', path, kind: kindOf(parts[2]), org, name: parts[3], gvc: parts[2] === 'gvc' ? parts[3] : null };
  if (parts.length === 5 && parts[2] === 'gvc') return { view: 'list', path, kind: kindOf(parts[4]), org, gvc: parts[3] };
  if (parts.length === 6 && parts[2] === 'gvc') return { view: 'item', path, kind: kindOf(parts[4]), org, gvc: parts[3], name: parts[5] };
  return null;
}

function showSignIn(message) {
  $('sign-in').hidden = false;
  $('shell').hidden = true;
  $('context').hidden = true;
  if (message) notice.show(message);
  $('key-input').focus();
}

async function signIn(event) {
  event.preventDefault();
  const key = $('key-input').value.trim();
  $('key-input').value = '';
  notice.clear();
  try {
    await call('GET', '/org', undefined, key); // the key is remembered only once the server takes it
  } catch (error) {
    showSignIn(describe('Signing in failed', error));
    return;
  }
  remember(key);
  state.orgs = [];
  await route();
}

function signOut(message) {
  forget();
  Object.assign(state, { orgs: [], org: null, gvcs: [], gvcOrg: null });
  replace($('view'));
  replace($('kinds'));
  notice.clear();
  if (window.location.hash) window.history.replaceState(null, '', window.location.pathname);
  showSignIn(message);
}

async function loadContext(org) {
  if (!state.kinds) state.kinds = (await get('/console/kinds.json')).kinds;
  if (!state.orgs.length) state.orgs = ((await get('/org')).items || []).map((o) => String(o.name));
  state.org = org || state.org || state.orgs[0] || null;
  if (state.org && state.gvcOrg !== state.org) {
    state.gvcs = ((await get(`/org/${segment(state.org)}/gvc?limit=1000`)).items || []).map((g) => String(g.name));
    state.gvcOrg = state.org;
  }
}

function drawContext(gvc) {
  const orgs = state.orgs.includes(state.org) || !state.org ? state.orgs : [state.org, ...state.orgs];
  replace($('org-select'), orgs.map((o) => h('option', { value: o, selected: o === state.org }, o)));
  replace($('gvc-select'), h('option', { value: '' }, '(none)'), state.gvcs.map((g) => h('option', { value: g, selected: g === gvc }, g)));
  const org = `/org/${segment(state.org)}`;
  const entries = state.kinds.map((kind) => {
    if (kind.scope === 'root') return h('li', {}, h('a', { href: '#/org', 'data-kind': kind.name }, kind.title));
    if (kind.scope === 'org') return h('li', {}, h('a', { href: `#${org}/${kind.name}`, 'data-kind': kind.name }, kind.title));
    if (!gvc) return h('li', { class: 'muted', title: 'Pick a GVC first' }, kind.title);
    return h('li', {}, h('a', { href: `#${org}/gvc/${segment(gvc)}/${kind.name}`, 'data-kind': kind.name }, kind.title));
  });
  replace($('kinds'), h('ul', {}, entries));
}

async function route() {
  if (!currentKey()) {
    showSignIn();
    return;
  }
  notice.clear();
  $('sign-in').hidden = true;
  $('shell').hidden = false;
  $('context').hidden = false;
  document.title = 'Plinth console';
  try {
    const org = parseRoute(window.location.hash)?.org;
    await loadContext(org);
  } catch (error) {
    if (currentKey()) notice.show(describe('Could not load the orgs and GVCs this key may see', error));
    return;
  }
  if (!state.org) {
    notice.show('This key may see no org: it needs the view permission on its org (a policy, or the viewers group).');
    return;
  }
  const current = parseRoute(window.location.hash);
  if (current?.gvc && state.gvcs.includes(current.gvc)) chooseGvc(current.gvc);
  drawContext(state.gvcs.includes(chosenGvc()) ? chosenGvc() : null);
  // Each route draws into a page of its own: a slow answer for a page left meanwhile lands in
  // a detached element, and its errors are not shown on the page that replaced it.
  const page = h('div', { class: 'page' });
  replace($('view'), page);
  if (!current || !current.kind) {
    if (window.location.hash && window.location.hash !== '#') notice.show(`The console has no page at ${window.location.hash}`);
    else window.location.replace(`#/org/${segment(state.org)}/gvc`);
    return;
  }
  const scoped = {
    show: (text) => page.isConnected && notice.show(text),
    clear: () => page.isConnected && notice.clear(),
  };
  (current.view === 'list' ? renderList : renderItem)(page, current, scoped);
}

function pickOrg() {
  chooseGvc(null);
  window.location.hash = `#/org/${segment($('org-select').value)}/gvc`;
}

function pickGvc() {
  const gvc = $('gvc-select').value;
  chooseGvc(gvc);
  const current = parseRoute(window.location.hash);
  if (gvc && current && current.view === 'list' && current.kind && current.kind.scope === 'gvc') {
    window.location.hash = `#/org/${segment(state.org)}/gvc/${segment(gvc)}/${current.kind.name}`;
  } else {
    drawContext(gvc || null);
  }
}

$('sign-in-form').addEventListener('submit', signIn);
$('sign-out').addEventListener('click', () => signOut());
window.addEventListener(REFUSED, (event) => signOut(describe('The server no longer accepts this key; sign in again', event.detail)));
$('org-select').addEventListener('change', pickOrg);
$('gvc-select').addEventListener('change', pickGvc);
window.addEventListener('hashchange', route);
route();
