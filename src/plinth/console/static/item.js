// One item: its summary, its spec and status as trees, its YAML and JSON as text, its links,
// its event log (`-eventlog`, paged by `next`) and its access report; the Edit and Delete
// actions, and Reveal for a kind with sealed fields (a secret's data).

import { accessSection } from './access.js';
import { describe, get, nextLink } from './api.js';
import { h, isLink, link, replace, routeOf, tags } from './dom.js';
import { followItem } from './live.js';
import { deleteAction } from './remove.js';
import { revealSection, sealedOf } from './reveal.js';
import { tree } from './tree.js';
import { toYaml } from './yaml.js';

/** Edit (PUT, or PATCH for the kinds without PUT) and Delete, as the kind's verbs allow. */
function actions(item, route, notice) {
  const verbs = Array.isArray(route.kind?.verbs) ? route.kind.verbs : [];
  const edit = verbs.includes('replace') || verbs.includes('patch')
    ? h('a', { href: `${routeOf(route.path)}/-edit`, id: 'edit-link', class: 'button' }, 'Edit as YAML') : null;
  const remove = verbs.includes('delete') ? deleteAction(item, route, notice) : null;
  if (!edit && !remove) return null;
  return [h('p', { class: 'page-actions' }, edit, ' ', remove && remove.button), remove && remove.panel];
}

function summary(item) {
  const rows = [
    ['Name', item.name],
    ['Kind', item.kind],
    ['Description', item.description],
    ['Tags', tags(item.tags)],
    ['Version', item.version],
    ['Created', item.created],
    ['Last modified', item.lastModified],
    ['ID', item.id],
  ];
  return h('dl', { class: 'summary', id: 'summary' },
    rows.filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

function links(item) {
  const listed = (Array.isArray(item.links) ? item.links : []).filter((l) => l && isLink(l.href));
  if (!listed.length) return null;
  return h('ul', { class: 'links', id: 'links' }, listed.map((l) => h('li', {}, h('span', { class: 'k' }, String(l.rel)), ' ', link(l.href))));
}

function eventLog(path, notice) {
  const body = h('tbody');
  const more = h('button', { type: 'button', id: 'events-more', hidden: true }, 'More events');
  const empty = h('p', { class: 'muted', id: 'events-status' }, 'Loading…');
  let nextHref = `${path}/-eventlog`;

  async function load() {
    try {
      const page = await get(nextHref);
      const events = page.items || [];
      body.append(...events.map((event) => {
        const context = event.context || {};
        return h('tr', {},
          h('td', {}, event.created ?? ''),
          h('td', {}, event.status ?? ''),
          h('td', {}, context.version ?? ''),
          h('td', {}, isLink(context.principalLink) ? link(context.principalLink) : String(context.principalLink ?? '')));
      }));
      nextHref = nextLink(page);
      more.hidden = !nextHref;
      empty.textContent = body.children.length ? '' : 'No events.';
    } catch (error) {
      empty.textContent = '';
      notice.show(describe('Could not load the event log', error));
    }
  }
  more.addEventListener('click', load);
  load();
  return h('section', { id: 'events' },
    h('h2', {}, 'Event log'),
    h('table', { class: 'items' }, h('thead', {}, h('tr', {}, ['When', 'Change', 'Version', 'By'].map((t) => h('th', { scope: 'col' }, t)))), body),
    empty, more);
}

export async function renderItem(view, route, notice) {
  if (!route.item) replace(view, h('p', { class: 'muted' }, 'Loading…'));
  let item = route.item; // a live redraw brings the item's new state (live.js)
  try {
    item = item || await get(route.path);
  } catch (error) {
    replace(view, h('h1', {}, route.name));
    notice.show(describe(`Could not open ${route.kind ? route.kind.title : 'the item'} ${route.name}`, error));
    return;
  }
  document.title = `${item.name} · ${item.kind} · Plinth console`;
  const json = h('pre', { class: 'json', id: 'json', tabindex: 0, 'aria-label': 'The item as JSON' }, JSON.stringify(item, null, 2));
  replace(view,
    h('h1', {}, h('span', { class: 'muted' }, `${item.kind} `), String(item.name)),
    actions(item, route, notice),
    summary(item),
    sealedOf(route.kind).length ? revealSection(route) : null,
    h('h2', {}, 'Spec'), h('div', { id: 'spec' }, tree(item.spec ?? null)),
    h('h2', {}, 'Status'), h('div', { id: 'status' }, tree(item.status ?? null)),
    h('details', { id: 'yaml-view', open: true }, h('summary', {}, 'YAML'), h('pre', { class: 'yaml', id: 'yaml', tabindex: 0, 'aria-label': 'The item as YAML' }, toYaml(item))),
    h('details', { id: 'json-view' }, h('summary', {}, 'JSON'), json),
    links(item) && [h('h2', {}, 'Links'), links(item)],
    eventLog(route.path, notice),
    accessSection(route.path, notice));
  // A live change redraws the page, unless the person is in the middle of something there
  // (typing the name to delete, or reading revealed data): then it is announced instead.
  const busy = () => Boolean(view.querySelector('#delete-panel:not([hidden]), #secret-revealed'));
  if (!route.item) followItem(view, route, item, notice, (next) => renderItem(view, { ...route, item: next }, notice), busy);
}
