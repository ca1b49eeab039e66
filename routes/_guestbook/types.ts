/**
 * @module
 * The guestbook's shapes, shared by the server and the island: types only, so the
 * island's bundle takes nothing from the server's modules.
 */

export interface Entry {
  /** 1, 2, 3, … in the order entries were committed: the list's order, and the SSE event id. */
  id: number;
  name: string;
  message: string;
  /** When it was signed: shown, never used for ordering (clocks differ between instances). */
  at: Date;
}

/**
 * What the guestbook form shows after a signing: the entry it added, or what was wrong. The list
 * itself comes from the page and the live feed; this stays small, as it rides in a cookie when the
 * form was posted without JavaScript.
 */
export interface GuestbookState {
  /** Set after a successful signing: the new entry, shown at once. */
  signed?: Entry;
  /** Set when the form was refused: what was wrong, field by field, and what was sent. */
  errors?: Partial<Record<"name" | "message", string[]>>;
  values?: { name: string; message: string };
  /** Set when the island was told to wait (429): what to say. */
  wait?: string;
}
