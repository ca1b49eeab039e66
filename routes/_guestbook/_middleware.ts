/**
 * Signing the guestbook is limited per client: 5 a minute. Over it, the action answers 429 with
 * `Retry-After` — a short page for a form posted without JavaScript, a status the island reads —
 * and never runs. Only the actions in this folder pay for the check.
 */
import { rateLimit } from "shell/data";

export const handler = rateLimit({ name: "guestbook-sign", limit: 5, windowMs: 60_000 });
