// An item's access report (`GET {item}/-accessreport`): who holds which permission, through
// which policy. The server lists it by permission; a person asks "who may do what", so the
// table has one row per principal: the permissions it holds, and the policies granting them.

import { describe, get } from './api.js';
import { h, isLink, link, replace } from './dom.js';

const linkOrText = (value) => (isLink(value) ? link(value) : String(value ?? ''));

/** `report.permissions[].bindings[]` as rows `{principal, permissions, grants}`, in the order met. */
export function byPrincipal(report) {
  const rows = new Map();
  for (const permission of Array.isArray(report?.permissions) ? report.permissions : []) {
    for (const binding of Array.isArray(permission?.bindings) ? permission.bindings : []) {
      const principal = String(binding.principalLink ?? '');
      if (!rows.has(principal)) rows.set(principal, { principal, permissions: [], grants: new Map() });
      const row = rows.get(principal);
      if (!row.permissions.includes(permission.name)) row.permissions.push(String(permission.name));
      const policy = String(binding.grantingPolicyLink ?? '');
      if (!row.grants.has(policy)) {
        row.grants.set(policy, { policy, granted: (binding.grantedPermissions || []).map(String), match: binding.match });
      }
    }
  }
  return [...rows.values()];
}

export function accessSection(path, notice) {
  const body = h('div', { id: 'access-body' }, h('p', { class: 'muted' }, 'Loading…'));
  (async () => {
    let report;
    try {
      report = await get(`${path}/-accessreport`);
    } catch (error) {
      replace(body);
      notice.show(describe('Could not load the access report', error));
      return;
    }
    const rows = byPrincipal(report);
    if (!rows.length) {
      replace(body, h('p', { class: 'muted' }, 'No policy grants anyone a permission on this item.'));
      return;
    }
    const grants = (row) => h('ul', { class: 'grants' }, [...row.grants.values()].map((grant) =>
      h('li', {}, linkOrText(grant.policy), ` (${grant.granted.join(', ')}; ${grant.match ?? ''})`)));
    const lines = rows.map((row) => h('tr', {},
      h('td', {}, linkOrText(row.principal)),
      h('td', {}, row.permissions.join(', ')),
      h('td', {}, grants(row))));
    replace(body, h('table', { class: 'items', id: 'access-table' },
      h('thead', {}, h('tr', {}, ['Principal', 'Permissions', 'Granted by'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, lines)));
  })();
  return h('section', { id: 'access', 'aria-labelledby': 'access-title' }, h('h2', { id: 'access-title' }, 'Access report'), body);
}
