/**
 * @module
 * The bounds of a feed's settings, checked where they are given (`feedOf`, a collection's `live`,
 * a subscription) rather than failing later: a ring of 0 kept every change (`slice(-0)`), a poll
 * of 0 ms or Infinity ran without pause, a backlog of 0, a fraction or Infinity made KV's list
 * throw at the first reconnect.
 */

/** The most recent changes a feed keeps in memory, per feed and process. */
export const MAX_RING = 10_000;
/** A feed's counter read at most this often, at least this seldom, when polled. */
export const MIN_POLL_MS = 10;
export const MAX_POLL_MS = 3_600_000;
/** The most missed changes read at once for a subscriber that comes back. */
export const MAX_BACKLOG = 10_000;

/** What is wrong with the settings given, as `name must ...`, or undefined. */
export function feedSettingsProblem(
  settings: { ringSize?: unknown; pollIntervalMs?: unknown; maxBacklog?: unknown },
): string | undefined {
  const { ringSize, pollIntervalMs, maxBacklog } = settings;
  if (ringSize !== undefined && !wholeWithin(ringSize, 1, MAX_RING)) {
    return `ringSize must be a whole number of changes from 1 to ${MAX_RING}`;
  }
  if (pollIntervalMs !== undefined && !wholeWithin(pollIntervalMs, MIN_POLL_MS, MAX_POLL_MS)) {
    return `pollIntervalMs must be whole milliseconds from ${MIN_POLL_MS} to an hour's ` +
      `(${MAX_POLL_MS}), or left out for no polling`;
  }
  if (maxBacklog !== undefined && !wholeWithin(maxBacklog, 1, MAX_BACKLOG)) {
    return `maxBacklog must be a whole number of changes from 1 to ${MAX_BACKLOG}`;
  }
  return undefined;
}

/** Whether `value` is a whole number from `min` to `max`. */
export function wholeWithin(value: unknown, min: number, max: number): boolean {
  return Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
}
