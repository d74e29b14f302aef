// A kind's sealed fields (`sealed` of kinds.json: a secret's data): a GET never carries them
// (docs/api.md "Secrets"); only the explicit Reveal calls `-reveal`, which needs the `reveal`
// permission. What it answers is put in this page's DOM as text and nowhere else (no storage,
// no URL), so leaving the page forgets it.

import { ApiError, describe, get } from './api.js';
import { h, replace } from './dom.js';
import { toYaml } from './yaml.js';

/** The fields of `kind` a GET leaves out and `-reveal` answers (none for most kinds). */
export function sealedOf(kind) {
  return Array.isArray(kind?.sealed) ? kind.sealed.map(String) : [];
}

/** Those fields in words: "secret's data". */
export function sealedWords(kind) {
  return `${kind.title.toLowerCase()}'s ${sealedOf(kind).join(' and ')}`;
}

export function revealSection(route) {
  const sealed = sealedOf(route.kind);
  const what = sealedWords(route.kind);
  const shown = h('div', { id: 'secret-data', 'aria-live': 'polite' },
    h('p', { class: 'muted' }, 'The data is not shown until you reveal it.'));
  const reveal = h('button', { type: 'button', id: 'reveal', onclick: show }, 'Reveal');
  const hide = h('button', { type: 'button', id: 'reveal-hide', hidden: true, onclick: conceal }, 'Hide');

  async function show() {
    reveal.disabled = true;
    try {
      const item = await get(`${route.path}/-reveal`);
      replace(shown, h('pre', { class: 'yaml', id: 'secret-revealed', tabindex: 0, 'aria-label': `The ${what}` }, toYaml(Object.fromEntries(sealed.map((field) => [field, item[field] ?? null])))));
      reveal.hidden = true;
      hide.hidden = false;
      hide.focus();
    } catch (error) {
      const denied = error instanceof ApiError && error.status === 403;
      replace(shown, h('p', { id: 'reveal-error', class: 'error', role: 'alert' },
        denied ? describe(`This key may not reveal the ${what} (it needs the reveal permission)`, error)
          : describe('Could not reveal the data', error)));
    } finally {
      reveal.disabled = false;
    }
  }

  function conceal() {
    replace(shown, h('p', { class: 'muted' }, 'The data is not shown until you reveal it.'));
    hide.hidden = true;
    reveal.hidden = false;
    reveal.focus();
  }

  return h('section', { id: 'secret', 'aria-labelledby': 'secret-title' },
    h('h2', { id: 'secret-title' }, 'Data'), shown, h('p', {}, reveal, hide));
}
