// The API client: the key from the session goes in `Authorization` only. No cookie exists, so
// no other site can make a request in the person's name; `credentials: 'omit'` says so too.

import { currentKey } from './session.js';

/** The event sent when the server refuses the session's key. */
export const REFUSED = 'plinth:key-refused';

export class ApiError extends Error {
  constructor(status, body) {
    super((body && typeof body.message === 'string' && body.message) || `HTTP ${status}`);
    this.status = status;
    this.code = body && typeof body.code === 'string' ? body.code : '';
    this.requestId = body && typeof body.id === 'string' ? body.id : '';
    // A 400's `details.errors` ([{path, message}]), a 409's `dependants`: the editor shows them.
    this.details = body && body.details && typeof body.details === 'object' ? body.details : null;
  }
}

/** Only paths of this origin are ever fetched (a `next` link or a route is data). */
function sameOrigin(path) {
  if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//')) {
    throw new Error(`not a path of this server: ${String(path)}`);
  }
  const url = new URL(path, window.location.origin);
  if (url.origin !== window.location.origin) throw new Error(`not a path of this server: ${path}`);
  return url.pathname + url.search;
}

/** `fetch` of `method path`: the key in `Authorization`, `body` as JSON, no cookie, no cache, no redirect. */
function send(method, path, body, { key, accept, signal }) {
  const headers = { Accept: accept };
  if (key) headers.Authorization = `Bearer ${key}`;
  const init = { method, headers, credentials: 'omit', cache: 'no-store', redirect: 'error', signal };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  return fetch(sameOrigin(path), init);
}

/** The ApiError of a refused `answer`, with the server's message when its body says one. */
export async function failure(answer) {
  let parsed = null;
  try {
    parsed = await answer.json();
  } catch {
    parsed = null;
  }
  return new ApiError(answer.status, parsed);
}

/** The JSON answer of `method path` (with `body` as JSON), or an ApiError with the server's message. */
export async function call(method, path, body, key = currentKey()) {
  const answer = await send(method, path, body, { key, accept: 'application/json' });
  if (!answer.ok) {
    const error = await failure(answer);
    // The key of this session stopped working (revoked, or its account deleted): sign out,
    // once the caller has shown its own message (the sign-in page's replaces it).
    if (answer.status === 401) refused(error, key);
    throw error;
  }
  const text = await answer.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/** The raw answer of a streamed request (a watch): the caller reads its body; `signal` ends it. */
export function open(method, path, body, signal, key = currentKey()) {
  return send(method, path, body, { key, accept: 'application/x-ndjson', signal });
}

/** Sign out because the server refused this session's key (`error`: an ApiError saying so). */
export function refused(error, key = currentKey()) {
  if (key && key === currentKey()) {
    setTimeout(() => window.dispatchEvent(new CustomEvent(REFUSED, { detail: error })), 0);
  }
}

export const get = (path) => call('GET', path);
export const post = (path, body) => call('POST', path, body);
export const put = (path, body) => call('PUT', path, body);
export const patch = (path, body) => call('PATCH', path, body);
export const remove = (path) => call('DELETE', path);

/** What went wrong, in the console's words, then the server's: shown as text. */
export function describe(doing, error) {
  if (error instanceof ApiError) {
    const ref = [`HTTP ${error.status}`, error.code, error.requestId && `request ${error.requestId}`];
    return `${doing}: ${error.message} (${ref.filter(Boolean).join(', ')})`;
  }
  return `${doing}: the server could not be reached or answered something unreadable (${error.message})`;
}

/** The `next` link of a list or query answer, if any. */
export function nextLink(page) {
  const found = (page && Array.isArray(page.links) ? page.links : []).find((l) => l && l.rel === 'next');
  return found && typeof found.href === 'string' ? found.href : null;
}
