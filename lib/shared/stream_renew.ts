/**
 * @module
 * The one word the server's event streams and the browser's `useFeed` share: the event a stream
 * sends when its lifetime is over, just before it ends. The hook opens the next stream at once,
 * from the last event id it got, so the page never shows a drop. Browser-safe.
 */

/** The type of the event that ends a stream at the end of its lifetime (reserved). */
export const RENEW_EVENT = "renew";
