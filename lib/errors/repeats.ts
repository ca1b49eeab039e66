/**
 * @module
 * Which repeats of a failure are sent to telemetry, for failures the browser repeats on its own:
 * an event stream whose source fails is opened again by every page that holds it, a second later,
 * for as long as the page stays open (measured: 50 pages on a source that always throws, 40-50
 * Sentry events a second, one per reconnection - the SDK bounds none of it). The first failure of
 * a digest is sent, then none of it until `ms` later; each still writes its line. Kept per app and
 * process, for at most `max` digests (the oldest sent goes first), so a message that varies cannot
 * grow it.
 */

/** What was sent for a digest: when, and the event id it got. */
interface Sent {
  at: number;
  eventId: string | null;
}

export class RepeatWindow {
  readonly #sent = new Map<string, Sent>();

  constructor(readonly ms: number, readonly max: number, readonly now: () => number = Date.now) {}

  /** What was sent for `digest` less than `ms` ago, if anything was: this failure repeats it. */
  repeated(digest: string): Sent | undefined {
    const last = this.#sent.get(digest);
    return last && this.now() - last.at < this.ms ? last : undefined;
  }

  /** `digest` was sent now, as `eventId`. */
  sent(digest: string, eventId: string | null): void {
    this.#sent.delete(digest); // to the end: the map's first entry is the one sent longest ago
    if (this.#sent.size >= this.max) this.#sent.delete(this.#sent.keys().next().value!);
    this.#sent.set(digest, { at: this.now(), eventId });
  }
}
