"use server";
/**
 * @module
 * The guestbook's server action. The form reaches it with or without JavaScript; a signing that
 * does not pass the schema comes back as field errors for the form to show, not as a failure. A
 * signed-in user signs with their own name, whatever the form says. It runs behind
 * `_middleware.ts`, which limits how often a client may call it.
 */
import * as v from "valibot";
import { formOf, requestContext } from "shell";
import { currentUser } from "shell/auth";
import { kvOf } from "shell/data";
import { addEntry } from "./entries.ts";
import type { GuestbookState } from "./types.ts";

// The lengths also keep an entry far below KV's 64 KiB a value: a field too long is a field error.
const Signing = v.object({
  name: v.pipe(
    v.string(),
    v.trim(),
    v.minLength(1, "Please tell us your name."),
    v.maxLength(40, "40 characters at most."),
  ),
  message: v.pipe(
    v.string(),
    v.trim(),
    v.minLength(3, "Say a little more: 3 characters at least."),
    v.maxLength(140, "140 characters at most."),
  ),
});

export async function sign(_previous: GuestbookState, form: FormData): Promise<GuestbookState> {
  const c = requestContext();
  // Anyone can post to an action: a call by hand without a form is refused (400) here.
  const user = await currentUser(c);
  const fields = { ...Object.fromEntries(formOf(form)), ...(user && { name: user.name }) };
  const parsed = await v.safeParseAsync(Signing, fields);
  if (!parsed.success) {
    return {
      errors: v.flatten<typeof Signing>(parsed.issues).nested,
      values: { name: echo(form.get("name")), message: echo(form.get("message")) },
    };
  }
  return { signed: await addEntry(kvOf(c), parsed.output) };
}

/**
 * What was sent, back into the form: enough to fix it, never so much that the state outgrows the
 * cookie that carries it when JavaScript is off (a 100 KB message comes back as its start).
 */
function echo(value: FormDataEntryValue | null): string {
  return typeof value === "string" ? value.slice(0, 500) : "";
}
