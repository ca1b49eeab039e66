/**
 * @module
 * The product's own settings, declared once: each an environment variable, read and checked with
 * the framework's when the app starts (a value that makes no sense stops it, naming the variable),
 * and read, typed, where a request is answered: `settings(ctx).GUESTBOOK_SHOWN`. docs/settings.md
 * says how to add yours; `secret()` keeps a key's value out of every message.
 */
import * as v from "valibot";
import { defineSettings } from "shell";

const ENTRIES = "expected a number of entries, 1 to 100";

export default defineSettings({
  /** How many of the newest guestbook entries its page shows: 5 unless set. */
  GUESTBOOK_SHOWN: v.optional(
    v.pipe(
      v.string(),
      v.digits(ENTRIES),
      v.toNumber(),
      v.minValue(1, ENTRIES),
      v.maxValue(100, ENTRIES),
    ),
    "5",
  ),
});
