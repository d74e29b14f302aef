// The YAML editor of Create and Edit: a labelled monospace textarea, and beside it what went
// wrong with the last Save: YAML that does not parse (its line and column; nothing is sent), or
// each problem of a 400 at its field path, with the line it points at. Everything is text.

import { ApiError, describe } from './api.js';
import { h, replace } from './dom.js';
import { parseYaml } from './yaml.js';
import { fieldOffsets, lineOf, locate } from './yamlpath.js';

const isMapping = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * `save(value)` sends the parsed mapping and resolves when the server took it (the caller then
 * navigates); it throws the ApiError. A 409 goes to `onConflict(error, text)` when given.
 * Returns `{ element, area, setText }`.
 */
export function yamlEditor({ label, text, saveLabel, cancelHref, save, onConflict, doing }) {
  const area = h('textarea', {
    id: 'yaml-editor',
    class: 'yaml-editor',
    rows: 24,
    spellcheck: 'false',
    autocapitalize: 'off',
    autocomplete: 'off',
    'aria-describedby': 'edit-problems',
  });
  area.value = text;
  const problems = h('div', { id: 'edit-problems', class: 'problems', role: 'alert', hidden: true });
  const saveButton = h('button', { type: 'submit', id: 'edit-save', class: 'primary' }, saveLabel);
  const form = h('form', { id: 'edit-form', class: 'editor', onsubmit: submit },
    h('label', { for: 'yaml-editor' }, label),
    h('div', { class: 'editor-body' }, area, problems),
    h('p', { class: 'editor-actions' }, saveButton, ' ', h('a', { href: cancelHref, id: 'edit-cancel' }, 'Cancel')));

  function show(...children) {
    replace(problems, children);
    problems.hidden = false;
    area.setAttribute('aria-invalid', 'true');
  }

  function clear() {
    replace(problems);
    problems.hidden = true;
    area.removeAttribute('aria-invalid');
  }

  /** Put the caret at `offset` and bring its line into view. */
  function goTo(offset) {
    area.focus();
    area.setSelectionRange(offset, offset);
    const lineHeight = parseFloat(getComputedStyle(area).lineHeight) || 18;
    area.scrollTop = Math.max(0, (lineOf(area.value, offset) - 3) * lineHeight);
  }

  function parseError(error) {
    const where = error.line ? ` at line ${error.line}, column ${error.column}` : '';
    show(
      h('p', { id: 'parse-error' }, `The YAML does not parse${where}: ${error.reason}. Nothing was sent.`),
      error.snippet ? h('pre', { class: 'snippet', tabindex: 0, 'aria-label': 'Where the YAML stops making sense' }, error.snippet) : null,
      error.position !== null ? h('button', { type: 'button', class: 'link', onclick: () => goTo(error.position) }, 'Show me') : null);
  }

  function fieldProblems(error, sent) {
    const offsets = fieldOffsets(sent);
    const entries = error.details.errors.map((problem) => {
      const path = String(problem && problem.path !== undefined ? problem.path : '');
      const at = locate(offsets, path);
      return h('li', { class: 'problem' },
        h('code', { class: 'path' }, path || '(the item)'), ' — ',
        h('span', { class: 'message' }, String(problem && problem.message !== undefined ? problem.message : '')),
        at === null ? null : [' ', h('button', { type: 'button', class: 'link', onclick: () => goTo(at) }, `line ${lineOf(sent, at)}`)]);
    });
    const count = entries.length === 1 ? 'a problem' : `${entries.length} problems`;
    show(h('p', {}, `The server found ${count}; nothing was stored (HTTP 400${error.requestId ? `, request ${error.requestId}` : ''}):`),
      h('ul', { id: 'problem-list' }, entries));
  }

  async function submit(event) {
    event.preventDefault();
    clear();
    const sent = area.value;
    const parsed = parseYaml(sent);
    if (parsed.error) {
      parseError(parsed.error);
      return;
    }
    if (!isMapping(parsed.value)) {
      show(h('p', { id: 'parse-error' }, 'The YAML must be a mapping of the item\'s fields (name: …, spec: …). Nothing was sent.'));
      return;
    }
    saveButton.disabled = true;
    try {
      await save(parsed.value);
    } catch (error) {
      if (error instanceof ApiError && error.status === 400 && Array.isArray(error.details?.errors) && error.details.errors.length) fieldProblems(error, sent);
      else if (error instanceof ApiError && error.status === 409 && onConflict) await onConflict(error, sent);
      else show(h('p', {}, describe(doing, error)));
    } finally {
      saveButton.disabled = false;
    }
  }

  return {
    element: form,
    area,
    setText(value) {
      area.value = value;
      clear();
    },
  };
}
