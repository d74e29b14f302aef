// Where the credential lives: sessionStorage, for this tab only (docs/console.md says why).
// Never a cookie (sent by the browser on requests other sites trigger), never a URL (kept in
// history, logs and Referer headers), never localStorage (outlives the tab).
//
// A credential is a service account key, or a user's ID token from the server's OpenID Connect
// issuer. An ID token signs in to one org only (the server finds the user in the org of the
// request path, and `GET /org` has none): that org is kept beside it.

const KEY = 'plinth.console.key';
const ORG = 'plinth.console.org';
const GVC = 'plinth.console.gvc';

/** The credential sent in `Authorization` (a key or an ID token), or null when signed out. */
export function currentKey() {
  return window.sessionStorage.getItem(KEY);
}

/** The org an ID token signs in to; null for a service account key (it may see several). */
export function tokenOrg() {
  return currentKey() ? window.sessionStorage.getItem(ORG) : null;
}

/** What the session signed in with, in words ("key" or "ID token"). */
export function credentialName() {
  return tokenOrg() ? 'ID token' : 'key';
}

/** Keep `key`; `org` for an ID token (the org it signs in to). */
export function remember(key, org = null) {
  window.sessionStorage.setItem(KEY, key);
  if (org) window.sessionStorage.setItem(ORG, org);
  else window.sessionStorage.removeItem(ORG);
}

/** Signing out: the credential and everything chosen with it are forgotten. */
export function forget() {
  window.sessionStorage.removeItem(KEY);
  window.sessionStorage.removeItem(ORG);
  window.sessionStorage.removeItem(GVC);
}

export function chosenGvc() {
  return window.sessionStorage.getItem(GVC);
}

export function chooseGvc(name) {
  if (name) window.sessionStorage.setItem(GVC, name);
  else window.sessionStorage.removeItem(GVC);
}
