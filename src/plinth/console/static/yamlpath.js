// Where a field path the server names (`spec.ports[0].routes[2].prefix`, `data["bad key"]`) sits
// in the YAML text a person sent: its line, so a 400's problems point into the editor. Walks
// js-yaml's parse events, which carry offsets, so it never guesses from indentation.

import { EVENT_ID as E, getScalarValue, parseEvents } from './vendor/js-yaml.esm.min.mjs';

/** Every field path of the document in `text` -> the offset of its key (or of its element). */
export function fieldOffsets(text) {
  const found = new Map();
  let events;
  try {
    events = parseEvents(text);
  } catch {
    return found;
  }
  const stack = [];
  for (const event of events) {
    if (event.type === E.POP) {
      stack.pop();
      continue;
    }
    if (event.type === E.DOCUMENT) {
      stack.push({ kind: 'skip' });
      continue;
    }
    const top = stack[stack.length - 1] || { kind: 'skip' };
    let path = '';
    let at = event.start ?? event.valueStart;
    if (top.kind === 'map' && top.expectKey) {
      // A key: a scalar names the next value; a complex key (rare) and its value are skipped.
      top.expectKey = false;
      top.key = event.type === E.SCALAR ? String(getScalarValue(text, event)) : null;
      top.keyAt = event.valueStart ?? event.start;
      if (event.type === E.MAPPING || event.type === E.SEQUENCE) stack.push({ kind: 'skip' });
      continue;
    }
    if (top.kind === 'map' && top.key === null) {
      top.expectKey = true;
      path = null;
    } else if (top.kind === 'map') {
      for (const form of [top.path ? `${top.path}.${top.key}` : top.key, `${top.path}[${JSON.stringify(top.key)}]`]) {
        if (!found.has(form)) found.set(form, top.keyAt);
      }
      path = top.path ? `${top.path}.${top.key}` : top.key;
      at = top.keyAt;
      top.expectKey = true;
    } else if (top.kind === 'seq') {
      path = `${top.path}[${top.index++}]`;
      found.set(path, at);
    } else if (stack.length > 1) {
      path = null; // inside a skipped part
    }
    if (event.type === E.MAPPING) stack.push(path === null ? { kind: 'skip' } : { kind: 'map', path, key: null, expectKey: true });
    else if (event.type === E.SEQUENCE) stack.push(path === null ? { kind: 'skip' } : { kind: 'seq', path, index: 0 });
  }
  return found;
}

/** The offset in `text` of `path`, or of its nearest enclosing field that is there (a missing
 *  field "is required" at its parent); `null` when none is. */
export function locate(offsets, path) {
  let rest = String(path || '');
  while (rest) {
    if (offsets.has(rest)) return offsets.get(rest);
    const shorter = rest.replace(/(\.[^.[\]]*|\[[^\]]*\])$/, '');
    if (shorter === rest) break;
    rest = shorter;
  }
  return null;
}

/** The line (from 1) of `offset` in `text`. */
export function lineOf(text, offset) {
  return text.slice(0, offset).split('\n').length;
}
