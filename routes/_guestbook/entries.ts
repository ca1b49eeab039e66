/**
 * @module
 * The guestbook's entries, kept in memory: an example needs no database. The newest few are all
 * anyone sees, so that is all that is kept.
 */

export interface Entry {
  name: string;
  message: string;
  at: Date;
}

/** What the guestbook form shows: the latest entries, and the outcome of the last signing. */
export interface GuestbookState {
  entries: Entry[];
  /** Set after a successful signing: the signer's name. */
  signed?: string;
  /** Set when the form was refused: what was wrong, field by field, and what was sent. */
  errors?: Partial<Record<"name" | "message", string[]>>;
  values?: { name: string; message: string };
}

const KEPT = 5;
const entries: Entry[] = [
  { name: "Ada", message: "Works with JavaScript off, too.", at: new Date("2026-01-01T09:00:00Z") },
];

export function latestEntries(): Entry[] {
  return entries.slice(0, KEPT);
}

export function addEntry(entry: Entry): void {
  entries.unshift(entry);
  entries.length = Math.min(entries.length, KEPT);
}
