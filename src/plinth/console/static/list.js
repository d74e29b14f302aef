// A list of one kind: server-side filtering and sorting through `-query` (the terms the CLI's
// `-query` sends, docs/api.md "Queries"), paged by the `next` links the API returns.

import { describe, get, nextLink, post } from './api.js';
import { h, link, replace, tags } from './dom.js';

const COLUMNS = [
  { by: 'name', title: 'Name' },
  { by: 'description', title: 'Description' },
  { by: null, title: 'Tags' },
  { by: 'created', title: 'Created' },
  { by: 'lastModified', title: 'Last modified' },
];

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
  // `ticket` numbers the loads: only the latest one draws (sorting twice quickly, say).
  const state = { name: '', tag: '', by: 'name', order: 'asc', pages: [], page: null, ticket: 0 };
  const nameInput = h('input', { id: 'filter-name', type: 'search', placeholder: 'name contains', 'aria-label': 'Name contains' });
  const tagInput = h('input', { id: 'filter-tag', type: 'search', placeholder: 'tag: key=value or key', 'aria-label': 'Tag' });
  const table = h('table', { class: 'items', id: 'items' });
  const status = h('p', { class: 'muted', id: 'list-status', 'aria-live': 'polite' });
  const previous = h('button', { type: 'button', id: 'page-previous', onclick: () => turn(-1) }, 'Previous page');
  const next = h('button', { type: 'button', id: 'page-next', onclick: () => turn(1) }, 'Next page');
  const form = h(
    'form',
    { class: 'filters', id: 'filters', onsubmit: (event) => { event.preventDefault(); restart(); } },
    nameInput,
    tagInput,
    h('button', { type: 'submit' }, 'Filter'),
    h('button', { type: 'button', onclick: () => { nameInput.value = ''; tagInput.value = ''; restart(); } }, 'Clear'),
  );
  replace(view, h('h1', {}, `${kind.title} `, h('span', { class: 'muted' }, route.gvc ? `in GVC ${route.gvc}` : '')), form, status, table, h('p', { class: 'pager' }, previous, next));

  // Each page is remembered as how to fetch it: the first is a POST of the query, the others the `next` GETs.
  function first() {
    if (kind.name === 'org') return get(path);
    const spec = { match: 'all', terms: terms(state.name, state.tag), sort: { by: state.by, order: state.order } };
    return post(`${path}/-query`, { kind: kind.name, spec });
  }

  async function load(index) {
    const ticket = ++state.ticket;
    notice.clear();
    status.textContent = 'Loading…';
    try {
      const href = state.pages[index];
      let page = href ? await get(href) : await first();
      if (ticket !== state.ticket) return;
      if (kind.name === 'org') page = localPage(page, state);
      state.page = index;
      const more = nextLink(page);
      if (more) state.pages[index + 1] = more;
      else state.pages.length = index + 1;
      draw(page.items || [], Boolean(more));
    } catch (error) {
      if (ticket !== state.ticket) return;
      status.textContent = '';
      notice.show(describe(`Could not load the ${kind.title} list`, error));
    }
  }

  function restart() {
    state.name = nameInput.value.trim();
    state.tag = tagInput.value.trim();
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

  function draw(items, more) {
    const rows = items.map((item) =>
      h('tr', {},
        h('td', {}, link(selfLink(item, path), String(item.name))),
        h('td', {}, item.description ?? ''),
        h('td', {}, tags(item.tags)),
        h('td', {}, item.created ?? ''),
        h('td', {}, item.lastModified ?? '')));
    replace(table, h('thead', {}, h('tr', {}, COLUMNS.map(header))), h('tbody', {}, rows));
    const filtered = state.name || state.tag ? ' matching the filter' : '';
    status.textContent = items.length
      ? `Page ${state.page + 1}: ${items.length} item${items.length === 1 ? '' : 's'}${filtered}${more ? ', more on the next page' : ''}`
      : `No ${kind.title} items${filtered}.`;
    previous.disabled = state.page === 0;
    next.disabled = !more;
  }

  restart();
}

/** The item's own path: its `self` link, or the collection's path and its name. */
function selfLink(item, collection) {
  const self = (Array.isArray(item.links) ? item.links : []).find((l) => l && l.rel === 'self');
  return self && typeof self.href === 'string' ? self.href : `${collection}/${encodeURIComponent(item.name)}`;
}
