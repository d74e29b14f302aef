// YAML in and out of the console, through the vendored js-yaml (vendor/README.md): the YAML 1.2
// core schema both ways, so `yes`, `on` and dates stay strings, and nothing is ever evaluated.

import { dump, load } from './vendor/js-yaml.esm.min.mjs';

/** Fields the server owns (docs/api.md "Versions and concurrency": it ignores them in a
 *  write). The editor leaves them out; the version goes with the write apart from the text. */
export const SERVER_OWNED = ['id', 'version', 'created', 'lastModified', 'links', 'status'];

/** `value` as YAML text: block style, keys in the order the server sent them, long strings
 *  kept on one line (a wrapped value is harder to edit than a long one). */
export function toYaml(value) {
  return dump(value, { lineWidth: -1, noRefs: true });
}

/** What a person may edit of `item`: everything but the server-owned fields, the common ones
 *  and the kind's own (`serverFields` of kinds.json: a GVC's `alias`). */
export function editable(item, kind) {
  const owned = [...SERVER_OWNED, ...(Array.isArray(kind?.serverFields) ? kind.serverFields : [])];
  return Object.fromEntries(Object.entries(item || {}).filter(([key]) => !owned.includes(key)));
}

/** The YAML `text` parsed: `{ value }`, or `{ error }` with the parser's reason and its line
 *  and column counted from 1 (what an editor shows), and the offset in `text` to put the caret. */
export function parseYaml(text) {
  try {
    return { value: load(text) };
  } catch (error) {
    const mark = error && error.mark ? error.mark : {};
    return {
      error: {
        reason: String((error && (error.reason || error.message)) || 'unreadable YAML'),
        line: Number.isInteger(mark.line) ? mark.line + 1 : null,
        column: Number.isInteger(mark.column) ? mark.column + 1 : null,
        position: Number.isInteger(mark.position) ? mark.position : null,
        snippet: typeof mark.snippet === 'string' ? mark.snippet : '',
      },
    };
  }
}
