// Live updates through the watch stream (docs/watch.md). The key goes in `Authorization`, which
// an EventSource cannot send, so this reads a `fetch` body as NDJSON, one event a line. A stream
// that drops resumes from the last `resourceVersion` it saw (an event's or a bookmark's), so
// nothing is missed or seen twice; a 410 `list_again` starts over from now and asks the page to
// load again (`onReset`); the page's AbortSignal ends it when the page is left.

import { ApiError, describe, failure, get, open, refused } from './api.js';
import { h } from './dom.js';

const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30000;

/** A pause that ends early when the signal aborts or the browser comes back online. */
function pause(ms, signal) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      window.removeEventListener('online', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
    window.addEventListener('online', done);
  });
}

/** The lines of a streamed body, as they arrive. */
async function* lines(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let at;
      while ((at = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, at).trim();
        buffered = buffered.slice(at + 1);
        if (line) yield line;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** Watch the collection at `path` until `signal` aborts.
 *  - `onEvent({type, resourceVersion, object})` for each ADDED, MODIFIED and DELETED;
 *  - `onReset()` once a stream that starts from now is live (the first one, and after a 410):
 *    what the page shows may predate it, so the page loads again;
 *  - `onState(state, error)`: 'connecting', 'live', 'reconnecting' (with the error when the
 *    server gave one) or 'off' (with the error: 401, 403, 404 or 400 do not get better by retrying).
 *  A 401 also signs the console out, as any refused request does. */
export async function watch(path, { onEvent, onReset = () => {}, onState = () => {}, signal }) {
  let version = null;
  let delay = FIRST_DELAY_MS;
  const say = (next, error) => {
    if (!signal.aborted) onState(next, error);
  };
  say('connecting');
  while (!signal.aborted) {
    let error = null;
    try {
      const from = version === null ? '' : `&resourceVersion=${encodeURIComponent(version)}`;
      const answer = await open('GET', `${path}?watch=true${from}`, undefined, signal);
      if (!answer.ok) {
        error = await failure(answer);
      } else {
        const fresh = version === null;
        let seen = false;
        for await (const line of lines(answer.body)) {
          const event = JSON.parse(line);
          if (event.type === 'ERROR') {
            error = new ApiError(Number(event.object && event.object.status) || 500, event.object);
            break;
          }
          if (typeof event.resourceVersion === 'string') version = event.resourceVersion;
          if (!seen) {
            seen = true;
            delay = FIRST_DELAY_MS;
            say('live');
            if (fresh && !signal.aborted) onReset();
          }
          if (event.type !== 'BOOKMARK' && !signal.aborted) onEvent(event);
        }
      }
    } catch {
      if (signal.aborted) return;
      error = null; // the connection dropped or could not be made: try again from `version`
    }
    if (signal.aborted) return;
    if (error && error.status === 410) {
      version = null; // the change log no longer reaches back there: start over, then load again
      continue;
    }
    if (error && [400, 401, 403, 404].includes(error.status)) {
      if (error.status === 401) refused(error);
      say('off', error);
      return;
    }
    say('reconnecting', error);
    await pause(error && error.status === 503 ? FIRST_DELAY_MS : delay, signal);
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
}

const WORDS = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  off: 'Not live',
};

/** The live indicator: a polite status naming the stream's state, in words. */
export function indicator() {
  const el = h('span', { class: 'live', id: 'live', role: 'status', 'aria-live': 'polite', 'data-state': 'connecting' }, WORDS.connecting);
  return {
    el,
    show(state) {
      el.dataset.state = state;
      el.textContent = WORDS[state] || state;
      el.title = state === 'live' ? 'Changes made elsewhere appear here as they happen' : '';
    },
  };
}

/** What a stream's error says to the person: the console's words, then the server's. */
function explain(state, error) {
  if (state === 'off') return describe('Live updates stopped', error);
  return describe('Live updates are interrupted; reconnecting', error);
}

/** The `onState` of a page's watch: the live indicator shows each state, an error goes to the
 *  page's notice, and the notice goes once the stream is live again. */
export function showState(live, notice) {
  let noticed = false;
  return (state, error) => {
    live.show(state);
    if (error) {
      noticed = true;
      notice.show(explain(state, error));
    } else if (state === 'live' && noticed) {
      noticed = false;
      notice.clear();
    }
  };
}

/** Keep an item's page live: the collection above it is watched and its events for this name
 *  kept. `redraw(item)` draws the page again with the item's new state, synchronously; the live
 *  indicator and the "deleted elsewhere" note are placed in the page's heading after each draw.
 *  `busy()` (the person is editing) holds a redraw back and says so instead. */
export function followItem(view, route, item, notice, redraw, busy = () => false) {
  const signal = route.signal;
  if (!signal) return;
  const collection = route.path.slice(0, route.path.lastIndexOf('/')) || '/org';
  const title = route.kind ? route.kind.title : 'item';
  const live = indicator();
  const gone = h('p', { class: 'gone', id: 'item-gone', role: 'alert' });
  let deleted = false;
  const place = () => {
    const heading = view.querySelector('h1');
    if (heading) heading.append(' ', live.el);
    if (deleted && heading) heading.after(gone);
    else gone.remove();
  };
  place();
  let last = JSON.stringify(item);
  const changed = (next) => {
    const text = JSON.stringify(next);
    if (text === last && !deleted) return;
    last = text;
    deleted = false;
    if (busy()) notice.show(`This ${title} was changed elsewhere (now version ${String(next.version)}).`);
    else redraw(next);
    place();
  };
  const vanished = () => {
    deleted = true;
    gone.textContent = `This ${title} was deleted elsewhere: what is shown is its last state.`;
    place();
  };
  watch(collection, {
    signal,
    onEvent: (event) => {
      if (!event.object || String(event.object.name) !== route.name) return;
      if (event.type === 'DELETED') vanished();
      else changed(event.object);
    },
    // A stream that starts from now may postdate a change: the item is read again.
    onReset: async () => {
      try {
        const next = await get(route.path);
        if (!signal.aborted) changed(next);
      } catch (error) {
        if (error.status === 404 && !signal.aborted) vanished();
      }
    },
    onState: showState(live, notice),
  });
}
