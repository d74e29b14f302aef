// The sign-in page: a service account key, or (when the server has an OpenID Connect issuer,
// which `/console/config.json` says) a user's ID token and the org it signs in to. A credential
// is kept only once the server has taken it; a refused one is forgotten and the server's reason
// shown. The page never redirects to an identity provider: the person pastes an ID token they
// got from it (docs/console.md says why).

import { ApiError, call, describe } from './api.js';
import { remember } from './session.js';

const $ = (id) => document.getElementById(id);
const state = { config: { oidc: null }, notice: null, signedIn: null, shown: false };

const method = () => (state.config.oidc && $('method-token').checked ? 'token' : 'key');

/** Show the sign-in choice the server offers, and the form of the one chosen. */
function offer() {
  const { oidc } = state.config;
  $('sign-in-method').hidden = !oidc;
  if (oidc) {
    $('token-issuer').textContent = String(oidc.issuer);
    $('token-audience').textContent = String(oidc.audience);
  }
  $('sign-in-form').hidden = method() !== 'key';
  $('token-form').hidden = method() !== 'token';
}

/** The sign-in page's part of showing it: the forms, a message, focus in the first field. */
export function showSignInForms(message) {
  if (message) state.notice.show(message);
  offer();
  const field = method() === 'key' ? $('key-input') : $('token-org').value ? $('token-input') : $('token-org');
  field.focus();
  if (!state.shown) performance.mark('console:sign-in-ready'); // the first-load figure (tests/console)
  state.shown = true;
}

async function signInWithKey(event) {
  event.preventDefault();
  const key = $('key-input').value.trim();
  $('key-input').value = '';
  state.notice.clear();
  try {
    await call('GET', '/org', undefined, key); // the key is remembered only once the server takes it
  } catch (error) {
    state.signedOut(describe('Signing in failed', error));
    return;
  }
  remember(key);
  state.signedIn();
}

async function signInWithToken(event) {
  event.preventDefault();
  const token = $('token-input').value.trim();
  const org = $('token-org').value.trim();
  $('token-input').value = '';
  state.notice.clear();
  try {
    await call('GET', `/org/${encodeURIComponent(org)}`, undefined, token);
  } catch (error) {
    // A 403 or 404 comes after the server took the token (the user is in the org) but may not
    // read the org itself (an item one may not view answers as a missing one: docs/api.md,
    // "Errors"): signed in all the same. Anything else (401: expired, another audience, not
    // invited to this org) is refused, in the server's words.
    if (!(error instanceof ApiError && (error.status === 403 || error.status === 404))) {
      state.signedOut(describe('Signing in failed', error));
      return;
    }
  }
  remember(token, org);
  state.signedIn();
}

/** Wire the page: `signedIn()` once a credential is kept, `signedOut(message)` to show the
 *  page again with a message. Fetches config.json without delaying the form. */
export function setUpSignIn(notice, signedIn, signedOut) {
  Object.assign(state, { notice, signedIn, signedOut });
  $('sign-in-form').addEventListener('submit', signInWithKey);
  $('token-form').addEventListener('submit', signInWithToken);
  for (const radio of [$('method-key'), $('method-token')]) radio.addEventListener('change', offer);
  call('GET', '/console/config.json', undefined, null)
    .then((config) => { state.config = config && typeof config === 'object' ? config : { oidc: null }; })
    .catch(() => { state.config = { oidc: null }; }) // the key form works without it
    .finally(offer);
}
