// Delete after typing the item's name: the button stays disabled until the text equals the
// name exactly, so a slip of the mouse deletes nothing. After a delete, the item's list.

import { describe, remove } from './api.js';
import { h, routeOf } from './dom.js';

/** The Delete button of an item page and the confirmation it opens. */
export function deleteAction(item, route, notice) {
  const name = String(item.name);
  const typed = h('input', {
    id: 'delete-name', type: 'text', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'delete-hint',
  });
  const confirm = h('button', { type: 'submit', id: 'delete-confirm', class: 'danger', disabled: true }, `Delete ${name}`);
  const status = h('p', { id: 'delete-status', role: 'status' });
  const panel = h('form', { id: 'delete-panel', class: 'danger-zone', hidden: true, onsubmit: submit },
    h('p', { id: 'delete-hint' }, `This deletes ${route.kind.title} `, h('strong', {}, name), '. Type its name to confirm.'),
    h('label', { for: 'delete-name' }, 'Name'), ' ', typed, ' ', confirm, ' ',
    h('button', { type: 'button', id: 'delete-cancel', onclick: close }, 'Cancel'),
    status);
  const open = h('button', { type: 'button', id: 'delete-open', class: 'danger', 'aria-expanded': 'false', 'aria-controls': 'delete-panel', onclick: show }, 'Delete…');
  typed.addEventListener('input', () => { confirm.disabled = typed.value !== name; });

  function show() {
    panel.hidden = false;
    open.setAttribute('aria-expanded', 'true');
    typed.focus();
  }

  function close() {
    panel.hidden = true;
    typed.value = '';
    confirm.disabled = true;
    open.setAttribute('aria-expanded', 'false');
    open.focus();
  }

  async function submit(event) {
    event.preventDefault();
    if (typed.value !== name) return; // the button is disabled; Enter in the field must not bypass it
    confirm.disabled = true;
    status.textContent = 'Deleting…';
    try {
      await remove(route.path);
    } catch (error) {
      status.textContent = '';
      confirm.disabled = typed.value !== name;
      notice.show(describe(`Could not delete ${route.kind.title} ${name}`, error));
      return;
    }
    window.location.hash = routeOf(route.path.slice(0, route.path.lastIndexOf('/')));
  }

  return { button: open, panel };
}
