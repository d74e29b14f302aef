// A list of one kind: server-side filtering and sorting through `-query` (the terms the CLI's
// `-query` sends, docs/api.md "Queries"), paged by the `next` links the API returns, kept live
// by a watch of the collection (live.js): a change that can alter the page loads it again.

import { describe, get, nextLink, post } from './api.js';
import { h, link, replace, selfPath, tags } from './dom.js';
import { createAction } from './edit.js';
import { indicator, showState, watch } from './live.js';
import { explainTerms, queryBuilder } from './query.js';

const COLUMNS = [
  { by: 'name', title: 'Name' },
  { by: 'description', title: 'Description' },
  { by: null, title: 'Tags' },
  { by: 'created', title: 'Created' },
  { by: 'lastModified', title: 'Last modified' },
];
export const PAGE_SIZES = [50, 200, 1000];
/** The rows drawn at once, then per frame. */
const FIRST_ROWS = 100;
const CHUNK_ROWS = 150;
/** Live reloads wait for this much quiet after a change, but never longer than MAX after the first. */
const QUIET_MS = 150;
const MAX_WAIT_MS = 1000;
/** How long the first load waits for the watch to be live, so that it need not load twice. */
const WATCH_HEAD_START_MS = 300;

/** The query terms of the filter form: a name substring, and a tag as `key=value` or `key`. */
export function terms(nameFilter, tagFilter) {
  const found = [];
  if (nameFilter) found.push({ op: 'contains', property: 'name', value: nameFilter });
  if (tagFilter) {
    const at = tagFilter.indexOf('=');
    if (at < 0) found.push({ op: 'exists', tag: tagFilter });
    else found.push({ op: '=', tag: tagFilter.slice(0, at), value: tagFilter.slice(at + 1) });
  }
  return found;
}

/** The org list (GET /org: the orgs the key may see) has no `-query`: a few items, filtered here. */
function localPage(page, state) {
  const [term] = terms('', state.tag);
  const items = (page.items || []).filter((item) => {
    if (state.name && !String(item.name).includes(state.name)) return false;
    if (!term) return true;
    const itemTags = item.tags || {};
    if (!(term.tag in itemTags)) return false;
    return term.op === 'exists' || String(itemTags[term.tag]) === term.value;
  });
  const sign = state.order === 'desc' ? -1 : 1;
  items.sort((a, b) => sign * String(a[state.by] ?? '').localeCompare(String(b[state.by] ?? '')));
  return { ...page, items };
}

export function renderList(view, route, notice) {
  const { kind, path } = route;
  const signal = route.signal || new AbortController().signal;
  const queried = kind.name !== 'org';
  // `ticket` numbers the loads: only the latest one draws (sorting twice quickly, say).
  const state = { name: '', tag: '', by: 'name', order: 'asc', size: PAGE_SIZES[0], written: [], match: 'all',
    pages: [], page: null, ticket: 0, drawing: 0, issued: false, shown: new Set() };
  const nameInput = h('input', { id: 'filter-name', type: 'search', placeholder: 'name contains', 'aria-label': 'Name contains' });
  const tagInput = h('input', { id: 'filter-tag', type: 'search', placeholder: 'tag: key=value or key', 'aria-label': 'Tag' });
  const size = h('select', { id: 'page-size', onchange: () => restart() },
    PAGE_SIZES.map((n) => h('option', { value: n }, String(n))));
  const builder = queryBuilder();
  const table = h('table', { class: 'items', id: 'items' });
  const status = h('p', { class: 'muted', id: 'list-status', 'aria-live': 'polite', 'data-path': path });
  const live = indicator();
  const previous = h('button', { type: 'button', id: 'page-previous', onclick: () => turn(-1) }, 'Previous page');
  const next = h('button', { type: 'button', id: 'page-next', onclick: () => turn(1) }, 'Next page');
  const form = h(
    'form',
    { class: 'filters', id: 'filters', onsubmit: (event) => { event.preventDefault(); restart(); } },
    nameInput,
    tagInput,
    h('label', {}, 'Per page ', size),
    queried && builder.el,
    h('span', { class: 'actions' },
      h('button', { type: 'submit' }, 'Filter'),
      h('button', { type: 'button', id: 'filters-clear', onclick: () => { nameInput.value = ''; tagInput.value = ''; builder.clear(); restart(); } }, 'Clear')),
  );
  replace(view, h('h1', {}, `${kind.title} `, h('span', { class: 'muted' }, route.gvc ? `in GVC ${route.gvc} ` : ''), live.el),
    createAction(route), form, status, table, h('p', { class: 'pager' }, previous, next));

  // Each page is remembered as how to fetch it: the first is a POST of the query, the others the `next` GETs.
  function first() {
    if (!queried) return get(path);
    const spec = { match: state.match, terms: state.written.map((w) => w.term), sort: { by: state.by, order: state.order } };
    return post(`${path}/-query?limit=${state.size}`, { kind: kind.name, spec });
  }

  async function load(index, quiet = false) {
    const ticket = ++state.ticket;
    state.issued = true;
    if (!quiet) {
      notice.clear();
      status.textContent = 'Loading…';
    }
    try {
      const href = state.pages[index];
      let page = href ? await get(href) : await first();
      if (ticket !== state.ticket) return;
      if (!queried) page = localPage(page, state);
      if (quiet && index > 0 && !(page.items || []).length) {
        // A live reload emptied a later page (its items deleted, or no longer matching): the
        // page before it is shown instead of an empty one.
        state.pages.length = index;
        load(index - 1, true);
        return;
      }
      state.page = index;
      const more = nextLink(page);
      if (more) state.pages[index + 1] = more;
      else state.pages.length = index + 1;
      explainTerms(state.written, null);
      draw(page.items || [], Boolean(more));
    } catch (error) {
      if (ticket !== state.ticket) return;
      status.textContent = '';
      const problems = error.status === 400 ? explainTerms(state.written, error) : [];
      if (problems.length) notice.show(describe(`The query was refused: ${problems.join('; ')}`, error));
      else notice.show(describe(`Could not load the ${kind.title} list`, error));
    }
  }

  function restart() {
    state.name = nameInput.value.trim();
    state.tag = tagInput.value.trim();
    state.size = Number(size.value) || PAGE_SIZES[0];
    state.match = builder.match();
    const shorthand = terms(state.name, state.tag).map((term) => ({
      term, label: term.property ? `the name filter (${state.name})` : `the tag filter (${state.tag})` }));
    state.written = queried ? [...shorthand, ...builder.read()] : [];
    state.pages = [null];
    load(0);
  }

  function turn(step) {
    const index = state.page + step;
    if (index >= 0 && index < state.pages.length) load(index);
  }

  function sortBy(by) {
    state.order = state.by === by && state.order === 'asc' ? 'desc' : 'asc';
    state.by = by;
    restart();
  }

  function header(column) {
    if (!column.by) return h('th', { scope: 'col' }, column.title);
    const sorted = state.by === column.by ? (state.order === 'asc' ? 'ascending' : 'descending') : 'none';
    const arrow = sorted === 'ascending' ? ' ▲' : sorted === 'descending' ? ' ▼' : '';
    return h('th', { scope: 'col', 'aria-sort': sorted },
      h('button', { type: 'button', class: 'sort', 'data-sort': column.by, onclick: () => sortBy(column.by) }, column.title + arrow));
  }

  /** One row: plain DOM calls (a page may hold 1,000 rows: five cells each, no parsing). */
  function row(item) {
    const tr = document.createElement('tr');
    const cells = [link(selfPath(item, path), String(item.name)), item.description ?? '', tags(item.tags), item.created ?? '', item.lastModified ?? ''];
    for (const value of cells) {
      const td = document.createElement('td');
      td.append(value instanceof Node ? value : String(value));
      tr.append(td);
    }
    return tr;
  }

  /** Rows go in by chunks, one chunk a frame: a page of 1,000 never holds the main thread for
   *  long (a key pressed meanwhile is taken at once). The status says the page once all are in. */
  function draw(items, more) {
    // A redraw under the focus (a sort, a live reload) gives it back to the same control:
    // focus.js, for every part of a page.
    const body = document.createElement('tbody');
    const drawing = ++state.drawing;
    state.shown = new Set(items.map((item) => String(item.name)));
    const add = (from, to) => {
      const chunk = document.createDocumentFragment();
      for (const item of items.slice(from, to)) chunk.append(row(item));
      body.append(chunk);
    };
    add(0, FIRST_ROWS);
    replace(table, h('thead', {}, h('tr', {}, COLUMNS.map(header))), body);
    const finish = () => {
      table.removeAttribute('aria-busy');
      const filtered = state.written.length || state.name || state.tag ? ' matching the filter' : '';
      status.textContent = items.length
        ? `Page ${state.page + 1}: ${items.length} item${items.length === 1 ? '' : 's'}${filtered}${more ? ', more on the next page' : ''}`
        : `No ${kind.title} items${filtered}.`;
      previous.disabled = state.page === 0;
      next.disabled = !more;
    };
    const rest = (from) => {
      if (drawing !== state.drawing) return; // a newer page is being drawn
      if (from >= items.length) return finish();
      add(from, from + CHUNK_ROWS);
      requestAnimationFrame(() => rest(from + CHUNK_ROWS));
    };
    if (items.length > FIRST_ROWS) table.setAttribute('aria-busy', 'true');
    rest(FIRST_ROWS);
  }

  // Live: any change may add an item to this page, move one (its sort value changed) or take one
  // off (it stopped matching); only a deletion of an item not shown cannot. The server sorts,
  // filters and pages, so the page is loaded again (debounced) rather than patched here.
  let timer = null;
  let since = 0;
  function schedule() {
    const now = performance.now();
    if (timer === null) since = now;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      if (!signal.aborted && state.page !== null) load(state.page, true);
    }, Math.max(0, Math.min(QUIET_MS, since + MAX_WAIT_MS - now)));
  }
  signal.addEventListener('abort', () => clearTimeout(timer));
  let ready;
  const watching = new Promise((resolve) => { ready = resolve; });
  const shown = showState(live, notice);
  watch(path, {
    signal,
    onEvent: (event) => {
      const name = event.object && String(event.object.name);
      if (event.type !== 'DELETED' || state.shown.has(name)) schedule();
    },
    onReset: () => { if (state.issued) schedule(); },
    onState: (liveState, error) => {
      shown(liveState, error);
      if (liveState === 'live' || liveState === 'off') ready();
    },
  });
  Promise.race([watching, new Promise((resolve) => setTimeout(resolve, WATCH_HEAD_START_MS))]).then(() => {
    if (!signal.aborted) restart();
  });
}
