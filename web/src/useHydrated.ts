import { useSyncExternalStore } from 'react';

const subscribe = () => () => undefined;

/**
 * False in the server's render (and so in the HTML a browser shows before the script has run),
 * true once React runs in the browser: controls that only work through script stay disabled
 * until then, so that nothing is sent by the browser's own form submission.
 */
export const useHydrated = () =>
  useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );
