// The query builder: rows of terms, each (property | tag | rel, its name, an operator, a value),
// and whether items must match all, any or none of them: the terms `-query` takes
// (docs/api.md "Queries"). The server judges the terms; its 400 names a term by its index
// (`spec.terms[2].value`), which `explainTerms` turns back into the row the person wrote.

import { h, replace } from './dom.js';

export const OPS = ['=', '!=', '>', '>=', '<', '<=', 'contains', '~', 'exists', '!exists'];
const WHAT = ['property', 'tag', 'rel'];
const NO_VALUE = new Set(['exists', '!exists']);
const TEXT_ONLY = new Set(['contains', '~', '=~']);

/** A value as typed, as the JSON value it reads as: numbers, `true`, `false` and `null` are sent
 *  as such for a property (so `version > 2` compares numbers); `"2"` (quoted) is the text. Tags
 *  compare as text anyway, and `contains` and `~` take text. */
export function valueOf(what, op, text) {
  if (what !== 'property' || TEXT_ONLY.has(op)) return text;
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text) || ['true', 'false', 'null'].includes(text) || /^".*"$/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** The builder: `el` to show, `read()` the terms written (each with the row it came from). */
export function queryBuilder() {
  const list = h('ol', { class: 'terms', id: 'query-terms' });
  const match = h('select', { id: 'query-match' },
    h('option', { value: 'all' }, 'all of the terms'),
    h('option', { value: 'any' }, 'any of the terms'),
    h('option', { value: 'none' }, 'none of the terms'));
  const add = h('button', { type: 'button', id: 'query-add', onclick: () => addRow().querySelector('select').focus() }, 'Add a term');
  const el = h('fieldset', { class: 'query', id: 'query-builder' },
    h('legend', {}, 'Query'),
    h('label', { class: 'match' }, 'Items matching ', match),
    list, add);

  function renumber() {
    [...list.children].forEach((row, index) => {
      const n = index + 1;
      row.querySelector('.q-what').setAttribute('aria-label', `Term ${n}: what`);
      row.querySelector('.q-name').setAttribute('aria-label', `Term ${n}: name`);
      row.querySelector('.q-op').setAttribute('aria-label', `Term ${n}: operator`);
      row.querySelector('.q-value').setAttribute('aria-label', `Term ${n}: value`);
      row.querySelector('.q-remove').setAttribute('aria-label', `Remove term ${n}`);
    });
  }

  function addRow() {
    const what = h('select', { class: 'q-what' }, WHAT.map((w) => h('option', { value: w }, w)));
    const name = h('input', { class: 'q-name', type: 'text', placeholder: 'name, spec.… or tag key', spellcheck: 'false' });
    const op = h('select', { class: 'q-op' }, OPS.map((o) => h('option', { value: o }, o)));
    const value = h('input', { class: 'q-value', type: 'text', placeholder: 'value', spellcheck: 'false' });
    const problem = h('span', { class: 'q-problem', role: 'note' });
    op.addEventListener('change', () => { value.disabled = NO_VALUE.has(op.value); });
    const row = h('li', { class: 'term' }, what, name, op, value,
      h('button', { type: 'button', class: 'q-remove', onclick: () => remove(row) }, 'Remove'), problem);
    list.append(row);
    renumber();
    return row;
  }

  function remove(row) {
    const next = row.nextElementSibling || row.previousElementSibling;
    row.remove();
    renumber();
    (next ? next.querySelector('.q-remove') : add).focus();
  }

  /** The terms written, in order: `{term, row, label}`; rows without a name are left out. */
  function read() {
    return [...list.children].map((row) => {
      const what = row.querySelector('.q-what').value;
      const name = row.querySelector('.q-name').value.trim();
      const op = row.querySelector('.q-op').value;
      const text = row.querySelector('.q-value').value;
      if (!name) return null;
      const term = { op, [what]: name };
      if (!NO_VALUE.has(op)) term.value = valueOf(what, op, text);
      const label = `${what} ${name} ${op}${NO_VALUE.has(op) ? '' : ` ${text}`}`;
      return { term, row, label };
    }).filter(Boolean);
  }

  function clear() {
    list.replaceChildren();
    match.value = 'all';
  }

  return { el, read, clear, match: () => match.value, add: addRow };
}

/** Beside each row the server found fault with, its message; and one line naming them all.
 *  `written` is the list of `{term, label, row?}` sent, in order; `error` the ApiError. */
export function explainTerms(written, error) {
  for (const { row } of written) {
    if (!row) continue;
    replace(row.querySelector('.q-problem'));
    row.removeAttribute('aria-invalid');
  }
  const problems = (error && error.details && Array.isArray(error.details.errors) ? error.details.errors : [])
    .map((problem) => {
      const found = /^spec\.terms\[(\d+)\]\.?(.*)$/.exec(String(problem.path || ''));
      const sent = found ? written[Number(found[1])] : null;
      if (!sent) return null;
      const where = found[2] ? `${found[2]}: ` : '';
      if (sent.row) {
        sent.row.setAttribute('aria-invalid', 'true');
        replace(sent.row.querySelector('.q-problem'), `${where}${String(problem.message)}`);
      }
      return `${sent.label}: ${where}${String(problem.message)}`;
    })
    .filter(Boolean);
  return problems;
}
