// An item's spec or status as a readable tree: keys and values as text; a value that is the
// path of another item (a domain route's workloadLink, a policy's targetLinks) links to it.

import { h, isLink, link } from './dom.js';

export function tree(value) {
  if (value === null || value === undefined) return h('span', { class: 'v-null' }, 'null');
  if (typeof value === 'string') return isLink(value) ? link(value) : h('span', { class: 'v-string' }, value);
  if (typeof value !== 'object') return h('span', { class: `v-${typeof value}` }, String(value));
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  if (!entries.length) return h('span', { class: 'muted' }, Array.isArray(value) ? '[] (empty)' : '{} (empty)');
  return h(
    'ul',
    { class: 'tree' },
    entries.map(([key, child]) =>
      h('li', {}, h('span', { class: Array.isArray(value) ? 'k-index' : 'k' }, key), ' ', tree(child)),
    ),
  );
}
