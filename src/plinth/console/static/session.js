// Where the key lives: sessionStorage, for this tab only (docs/console.md says why). Never a
// cookie (sent by the browser on requests other sites trigger), never a URL (kept in history,
// logs and Referer headers), never localStorage (outlives the tab).

const KEY = 'plinth.console.key';
const GVC = 'plinth.console.gvc';

export function currentKey() {
  return window.sessionStorage.getItem(KEY);
}

export function remember(key) {
  window.sessionStorage.setItem(KEY, key);
}

/** Signing out: the key and everything chosen with it are forgotten. */
export function forget() {
  window.sessionStorage.removeItem(KEY);
  window.sessionStorage.removeItem(GVC);
}

export function chosenGvc() {
  return window.sessionStorage.getItem(GVC);
}

export function chooseGvc(name) {
  if (name) window.sessionStorage.setItem(GVC, name);
  else window.sessionStorage.removeItem(GVC);
}
