// Create and Edit as YAML. Create starts from the kind's template (templates.json, one file,
// which tests/api creates on both stores) and POSTs to the collection. Edit PUTs the item back
// with the `version` it was opened at (PATCH for the kinds that have no PUT), so a change made
// elsewhere meanwhile is a 409: the conflict screen shows both sides and lets the person reload.

import { describe, get, patch, post, put } from './api.js';
import { h, replace, routeOf, selfPath } from './dom.js';
import { yamlEditor } from './editor.js';
import { sealedOf, sealedWords } from './reveal.js';
import { chosenGvc } from './session.js';
import { editable, toYaml } from './yaml.js';

let templates = null;

/** The templates, fetched once: `{kind: template}`. */
function loadTemplates() {
  templates = templates || get('/console/templates.json').then((file) => file.templates || {}, (error) => {
    templates = null;
    throw error;
  });
  return templates;
}

const has = (kind, verb) => Boolean(kind && Array.isArray(kind.verbs) && kind.verbs.includes(verb));

/** `{org}` and `{gvc}` in every string of a template. */
function fill(value, subs) {
  if (typeof value === 'string') return value.replace(/\{(org|gvc)\}/g, (_, key) => subs[key]);
  if (Array.isArray(value)) return value.map((v) => fill(v, subs));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, subs)]));
  return value;
}

/** The "Create" link of a list page, shown once the kind is known to have a template. */
export function createAction(route) {
  const link = h('a', { href: `${routeOf(route.path)}/-create`, id: 'create-link', class: 'button' }, `Create ${route.kind.title}`);
  const actions = h('p', { class: 'page-actions', hidden: true }, link);
  if (has(route.kind, 'create') && route.kind.scope !== 'root') {
    loadTemplates().then((found) => { actions.hidden = !found[route.kind.name]; }, () => {});
  }
  return actions;
}

export async function renderCreate(view, route, notice) {
  const { kind } = route;
  replace(view, h('p', { class: 'muted' }, 'Loading…'));
  let template;
  try {
    template = (await loadTemplates())[kind.name];
  } catch (error) {
    notice.show(describe('Could not load the templates', error));
    return;
  }
  if (!template || !has(kind, 'create') || kind.scope === 'root') {
    replace(view, h('h1', {}, `Create ${kind.title}`), h('p', {}, `${kind.title} items are not created from the console.`));
    return;
  }
  document.title = `Create ${kind.title} · Plinth console`;
  const gvc = route.gvc || chosenGvc() || 'my-gvc';
  const editor = yamlEditor({
    label: `The new ${kind.title}, as YAML`,
    text: toYaml(fill(template, { org: route.org, gvc })),
    saveLabel: 'Create',
    cancelHref: routeOf(route.path),
    doing: `Could not create the ${kind.title}`,
    save: async (value) => {
      const created = await post(route.path, value);
      window.location.hash = routeOf(selfPath(created, route.path));
    },
  });
  replace(view,
    h('h1', {}, `Create ${kind.title} `, h('span', { class: 'muted' }, route.gvc ? `in GVC ${route.gvc}` : '')),
    h('p', { id: 'edit-intro' }, 'Fill in the name, change what you need, then Create. The server checks everything and names each problem.'),
    editor.element);
  // The caret on the empty name (selected, so typing replaces the quotes): the one field to fill.
  const at = editor.area.value.indexOf("name: ''");
  editor.area.focus();
  if (at >= 0) editor.area.setSelectionRange(at + 6, at + 8);
}

export async function renderEdit(view, route, notice) {
  const { kind } = route;
  replace(view, h('p', { class: 'muted' }, 'Loading…'));
  let item;
  try {
    item = await get(route.path);
  } catch (error) {
    replace(view, h('h1', {}, `Edit ${route.name}`));
    notice.show(describe(`Could not open ${kind ? kind.title : 'the item'} ${route.name}`, error));
    return;
  }
  document.title = `Edit ${item.name} · ${item.kind} · Plinth console`;
  const state = { version: item.version };
  const usesPut = has(kind, 'replace');
  const version = h('p', { id: 'edit-version' });
  const showVersion = (text) => { version.textContent = text || `Editing version ${state.version}.`; };
  showVersion();
  const sealed = sealedOf(kind);
  const notes = [
    usesPut ? null : `${kind.title} items have no PUT: Save sends a PATCH, which merges into the item (a field you remove stays; set it to null to remove it).`,
    sealed.length ? `The ${sealedWords(kind)} is not shown here: leave it out to keep the stored values, or add ${sealed.map((f) => `${f}:`).join(' ')} to replace them.` : null,
  ].filter(Boolean);
  const conflict = h('section', { id: 'conflict', class: 'conflict', hidden: true, 'aria-labelledby': 'conflict-title' });
  const editor = yamlEditor({
    label: `${kind.title} ${item.name}, as YAML`,
    text: toYaml(editable(item, kind)),
    saveLabel: 'Save',
    cancelHref: routeOf(route.path),
    doing: `Could not save ${kind.title} ${item.name}`,
    save: async (value) => {
      const body = { ...value, version: state.version }; // the version it was opened at, whatever the text says
      await (usesPut ? put : patch)(route.path, body);
      window.location.hash = routeOf(route.path);
    },
    onConflict: (error, mine) => showConflict(error, mine),
  });

  async function showConflict(error, mine) {
    let current;
    try {
      current = await get(route.path);
    } catch (failure) {
      notice.show(describe(`${describe('Could not save', error)}; then could not read the item again`, failure));
      return;
    }
    const theirs = toYaml(editable(current, kind));
    const reload = h('button', { type: 'button', id: 'conflict-reload', class: 'primary', onclick: () => resume(theirs) }, `Reload: edit version ${current.version}`);
    const keep = h('button', { type: 'button', id: 'conflict-keep', onclick: () => resume(null) }, 'Keep editing mine');
    replace(conflict,
      h('h2', { id: 'conflict-title', tabindex: '-1' }, 'This item changed since you opened it'),
      h('p', {}, `You edited version ${state.version}; the server now holds version ${current.version}. Nothing of yours was saved (${error.message}).`),
      h('div', { class: 'sides' },
        h('figure', {}, h('figcaption', {}, 'Your edit'), h('pre', { class: 'yaml', id: 'conflict-mine', tabindex: 0, 'aria-label': 'Your edit' }, mine)),
        h('figure', {}, h('figcaption', {}, `The server's version ${current.version}`), h('pre', { class: 'yaml', id: 'conflict-theirs', tabindex: 0, 'aria-label': "The server's version" }, theirs))),
      h('p', { class: 'editor-actions' }, reload, ' ', keep,
        h('span', { class: 'muted' }, ` Keeping yours, the next Save replaces version ${current.version} with it.`)));
    editor.element.hidden = true;
    conflict.hidden = false;
    conflict.querySelector('h2').focus();

    function resume(text) {
      state.version = current.version;
      if (text !== null) {
        editor.setText(text);
        showVersion();
      } else {
        showVersion(`Editing your text over version ${state.version}: Save replaces the change made meanwhile.`);
      }
      conflict.hidden = true;
      editor.element.hidden = false;
      editor.area.focus();
    }
  }

  replace(view,
    h('h1', {}, h('span', { class: 'muted' }, `Edit ${item.kind} `), String(item.name)),
    version,
    notes.map((note) => h('p', { class: 'muted' }, note)),
    conflict,
    editor.element);
  editor.area.focus();
}
