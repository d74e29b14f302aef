// Where keyboard focus goes. A route change moves it to the new page's heading (once the page
// has drawn it), so keyboard and screen reader users land in the content; a part of a page
// redrawn under the focus (a sorted table's headers, a live update's rows) gives it back to its
// successor, so the person does not fall back to the top of the document.

/** The selector that finds `el`'s successor after a redraw, or null when nothing names it. */
function keyOf(el) {
  if (el.id) return `#${CSS.escape(el.id)}`;
  if (el.dataset && el.dataset.sort) return `[data-sort="${CSS.escape(el.dataset.sort)}"]`;
  if (el.tagName === 'A' && el.getAttribute('href')) return `a[href="${CSS.escape(el.getAttribute('href'))}"]`;
  return null;
}

const lost = () => !document.activeElement || document.activeElement === document.body;

/** Keep focus inside `root` across redraws; `forget()` when a new route replaces it all. */
export function keepFocus(root) {
  let last = null;
  document.addEventListener('focusin', (event) => {
    last = root.contains(event.target) ? event.target : null;
  });
  new MutationObserver(() => {
    if (!last || last.isConnected || !lost()) return;
    const key = keyOf(last);
    const successor = key && root.querySelector(key);
    // No successor yet: a long list draws its rows a chunk a frame, so a later mutation may
    // bring it (as long as the focus is still nowhere else).
    if (successor || !key) last = null; // before focus(): its focusin names the successor
    if (successor) successor.focus();
  }).observe(root, { childList: true, subtree: true });
  return { forget: () => { last = null; } };
}

/** Focus `page`'s h1 once it is drawn, unless the person has moved focus elsewhere meanwhile
 *  (`from` is where focus was when the route changed). */
export function focusHeading(page, from = document.activeElement) {
  const land = () => {
    if (!page.isConnected) return true; // another route replaced it: nothing to do
    const heading = page.querySelector('h1');
    if (!heading) return false; // not drawn yet (an item draws once it has loaded)
    if (lost() || document.activeElement === from) {
      heading.tabIndex = -1;
      heading.focus();
    }
    return true;
  };
  if (land()) return;
  const watcher = new MutationObserver(() => land() && watcher.disconnect());
  watcher.observe(page, { childList: true, subtree: true });
}
