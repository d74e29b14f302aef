// Building DOM from data safely: every value is added as a text node or an attribute set by
// name from this code, never parsed as HTML (no HTML-parsing property or method anywhere here).

/** An element: `attrs` names come from the console's code; `on*` keys are event listeners;
 *  children are nodes or values shown as text. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace everything in `el` with `children`. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** The console's address of an API path: a hash route, so the page never reloads and the
 *  path never reaches the server as a URL (only as the API call the view makes). */
export function routeOf(apiPath) {
  return '#' + apiPath;
}

/** Is `value` the path of an API item or collection in the link form items use? */
export function isLink(value) {
  return typeof value === 'string' && /^\/org\/[A-Za-z0-9._@%+-]+(\/[A-Za-z0-9._@%+-]+)*$/.test(value);
}

/** An item's own API path: its `self` link, else the path of `collection` and its name. */
export function selfPath(item, collection) {
  const self = (Array.isArray(item?.links) ? item.links : []).find((l) => l && l.rel === 'self');
  return self && typeof self.href === 'string' ? self.href : `${collection}/${encodeURIComponent(item.name)}`;
}

/** A link to the console page of `apiPath`, showing `text` (the path itself by default). */
export function link(apiPath, text) {
  return h('a', { href: routeOf(apiPath) }, text ?? apiPath);
}

export function tags(tagMap) {
  const entries = Object.entries(tagMap || {});
  if (!entries.length) return h('span', { class: 'muted' }, 'none');
  return h('span', { class: 'tags' }, entries.map(([k, v]) => h('span', { class: 'tag' }, `${k}=${String(v)}`)));
}
