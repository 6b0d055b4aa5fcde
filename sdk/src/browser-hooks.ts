/**
 * Calls `onHide` when the page is hidden (`visibilitychange` to `hidden`) or
 * left (`pagehide`): the last moments a page can send anything. Does nothing
 * outside a browser document. Returns the function that removes the hooks.
 */
export function installPageHooks(onHide: () => void): () => void {
  if (typeof document === 'undefined' || typeof window === 'undefined') return () => {};
  if (typeof document.addEventListener !== 'function' || typeof window.addEventListener !== 'function') {
    return () => {};
  }
  const onVisibility = (): void => {
    if (document.visibilityState === 'hidden') onHide();
  };
  document.addEventListener('visibilitychange', onVisibility);
  window.addEventListener('pagehide', onHide);
  return () => {
    document.removeEventListener('visibilitychange', onVisibility);
    window.removeEventListener('pagehide', onHide);
  };
}
