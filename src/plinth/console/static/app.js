// The console's shell: the org and GVC pickers, the kinds, and the hash router (sign-in is
// signin.js, where focus goes is focus.js). A route is the API path of what is shown
// (`#/org/acme/gvc/main/workload/web`): a list for a collection path, an item otherwise.

import { REFUSED, ApiError, describe, get } from './api.js';
import { h, replace } from './dom.js';
import { renderCreate, renderEdit } from './edit.js';
import { focusHeading, keepFocus } from './focus.js';
import { renderItem } from './item.js';
import { renderList } from './list.js';
import { chooseGvc, chosenGvc, credentialName, currentKey, forget, tokenOrg } from './session.js';
import { setUpSignIn, showSignInForms } from './signin.js';

const $ = (id) => document.getElementById(id);
// `keepFocus`: the next route leaves focus where it is; the page's first route does too (a
// freshly loaded page starts at its top, where the skip link is).
const state = { kinds: null, orgs: [], org: null, gvcs: [], gvcOrg: null, keepFocus: true, leaving: new AbortController() };
const focus = keepFocus($('view'));

/** Leaving a page ends what it started (its watch stream): each route gets a new signal. */
function leavePage() {
  state.leaving.abort();
  state.leaving = new AbortController();
  return state.leaving.signal;
}

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

/** What a hash route shows: `{view: 'list' | 'item', path, kind, gvc, name, org, action}`; a
 *  collection's route ending `/-create` creates in it, an item's ending `/-edit` edits it. */
function parseRoute(hash) {
  const action = /\/-(create|edit)$/.exec(hash);
  const found = parsePath(action ? hash.slice(0, action.index) : hash);
  return found && { ...found, action: action ? action[1] : null };
}

function parsePath(hash) {
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

function showShell(signedIn) {
  $('sign-in').hidden = signedIn;
  $('view').hidden = !signedIn;
  $('kinds').hidden = !signedIn;
  $('context').hidden = !signedIn;
}

function showSignIn(message) {
  showShell(false);
  showSignInForms(message);
}

function signOut(message) {
  leavePage();
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
  // An ID token signs in to its one org, and `GET /org` (no org in the path) is not for it.
  if (tokenOrg()) state.orgs = [tokenOrg()];
  else if (!state.orgs.length) state.orgs = ((await get('/org')).items || []).map((o) => String(o.name));
  state.org = tokenOrg() || org || state.org || state.orgs[0] || null;
  if (state.org && state.gvcOrg !== state.org) {
    try {
      state.gvcs = ((await get(`/org/${segment(state.org)}/gvc?limit=1000`)).items || []).map((g) => String(g.name));
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 403)) throw error;
      state.gvcs = []; // a user may see the org's other kinds without any GVC
    }
    state.gvcOrg = state.org;
  }
}

function drawContext(gvc) {
  const orgs = state.orgs.includes(state.org) || !state.org ? state.orgs : [state.org, ...state.orgs];
  replace($('org-select'), orgs.map((o) => h('option', { value: o, selected: o === state.org }, o)));
  replace($('gvc-select'), h('option', { value: '' }, '(none)'), state.gvcs.map((g) => h('option', { value: g, selected: g === gvc }, g)));
  const org = `/org/${segment(state.org)}`;
  const entries = state.kinds.map((kind) => {
    // The org list is GET /org; an ID token's session opens its org instead.
    if (kind.scope === 'root') return h('li', {}, h('a', { href: tokenOrg() ? `#${org}` : '#/org', 'data-kind': kind.name }, kind.title));
    if (kind.scope === 'org') return h('li', {}, h('a', { href: `#${org}/${kind.name}`, 'data-kind': kind.name }, kind.title));
    if (!gvc) return h('li', { class: 'muted', title: 'Pick a GVC first' }, kind.title);
    return h('li', {}, h('a', { href: `#${org}/gvc/${segment(gvc)}/${kind.name}`, 'data-kind': kind.name }, kind.title));
  });
  // Narrow screens show the kinds behind this button (console.css); wide ones hide the button.
  const open = $('kinds').classList.contains('open');
  const toggle = h('button', { type: 'button', id: 'kinds-toggle', class: 'kinds-toggle', 'aria-expanded': String(open), 'aria-controls': 'kinds-list', onclick: () => toggleKinds() }, 'Kinds');
  replace($('kinds'), toggle, h('ul', { id: 'kinds-list' }, entries));
}

function toggleKinds(open = !$('kinds').classList.contains('open')) {
  $('kinds').classList.toggle('open', open);
  $('kinds-toggle')?.setAttribute('aria-expanded', String(open));
}

async function route() {
  const signal = leavePage();
  if (!currentKey()) {
    showSignIn();
    return;
  }
  const from = document.activeElement;
  const keep = state.keepFocus;
  state.keepFocus = false;
  focus.forget();
  notice.clear();
  showShell(true);
  toggleKinds(false);
  document.title = 'Plinth console';
  const wanted = parseRoute(window.location.hash);
  if (tokenOrg() && wanted && (wanted.org === null || (wanted.org && wanted.org !== tokenOrg()))) {
    // This ID token signs in to its org only: another org's page, or the list of orgs, is its org's page.
    state.keepFocus = keep; // the route it replaces never drew: its focus rule holds
    window.location.replace(`#/org/${segment(tokenOrg())}`);
    return;
  }
  try {
    await loadContext(wanted?.org);
  } catch (error) {
    if (currentKey()) notice.show(describe(`Could not load the orgs and GVCs this ${credentialName()} may see`, error));
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
    else {
      state.keepFocus = keep;
      window.location.replace(`#/org/${segment(state.org)}/gvc`);
    }
    return;
  }
  const scoped = {
    show: (text) => page.isConnected && notice.show(text),
    clear: () => page.isConnected && notice.clear(),
  };
  const views = { list: { show: renderList, create: renderCreate }, item: { show: renderItem, edit: renderEdit } };
  const render = views[current.view][current.action || 'show'];
  if (!render) {
    notice.show(`The console has no page at ${window.location.hash}`);
    return;
  }
  render(page, { ...current, signal }, scoped);
  if (!keep) focusHeading(page, from);
}

function pickOrg() {
  chooseGvc(null);
  state.keepFocus = true; // a keyboard user arrowing through the picker stays in it
  window.location.hash = `#/org/${segment($('org-select').value)}/gvc`;
}

function pickGvc() {
  const gvc = $('gvc-select').value;
  chooseGvc(gvc);
  const current = parseRoute(window.location.hash);
  if (gvc && current && current.view === 'list' && current.kind && current.kind.scope === 'gvc') {
    state.keepFocus = true;
    window.location.hash = `#/org/${segment(state.org)}/gvc/${segment(gvc)}/${current.kind.name}`;
  } else {
    drawContext(gvc || null);
  }
}

/** "Skip to content": the page's heading (or the main region), without touching the route. */
function skipToContent(event) {
  event.preventDefault();
  const heading = [...document.querySelectorAll('#main h1')].find((el) => el.offsetParent !== null);
  const target = heading || $('main');
  if (heading) heading.tabIndex = -1;
  target.focus();
}

setUpSignIn(notice, () => { state.orgs = []; state.keepFocus = false; route(); }, (message) => showSignIn(message));
$('skip').addEventListener('click', skipToContent);
$('sign-out').addEventListener('click', () => signOut());
window.addEventListener(REFUSED, (event) => signOut(describe(`The server no longer accepts this ${credentialName()}; sign in again`, event.detail)));
$('org-select').addEventListener('change', pickOrg);
$('gvc-select').addEventListener('change', pickGvc);
window.addEventListener('hashchange', route);
route();
