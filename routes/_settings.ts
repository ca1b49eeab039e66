/**
 * @module
 * The product's own settings, declared once: each an environment variable, read and checked with
 * the framework's when the app starts (a value that makes no sense stops it, naming the variable),
 * and read, typed, where a request is answered: `settings(ctx).GUESTBOOK_SHOWN`. docs/settings.md
 * says how to add yours; `secret()` keeps a key's value out of every message.
 */
import * as v from "valibot";
import { defineSettings, wholeNumber } from "shell";

export default defineSettings({
  /** How many of the newest guestbook entries its page shows: 5 unless set (1-100). */
  GUESTBOOK_SHOWN: v.optional(wholeNumber(1, 100, "a number of entries (1-100)"), "5"),
});
