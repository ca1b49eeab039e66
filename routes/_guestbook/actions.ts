"use server";
/**
 * @module
 * The guestbook's server action. The form reaches it with or without JavaScript; a signing that
 * does not pass the schema comes back as field errors for the form to show, not as a failure.
 */
import * as v from "valibot";
import { addEntry, type GuestbookState, latestEntries } from "./entries.ts";

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
  // Anyone can post to an action: a request without the form's fields signs nothing.
  if (!(form instanceof FormData)) form = new FormData();
  const parsed = await v.safeParseAsync(Signing, Object.fromEntries(form));
  if (!parsed.success) {
    return {
      entries: latestEntries(),
      errors: v.flatten<typeof Signing>(parsed.issues).nested,
      values: { name: String(form.get("name") ?? ""), message: String(form.get("message") ?? "") },
    };
  }
  addEntry({ ...parsed.output, at: new Date() });
  return { entries: latestEntries(), signed: parsed.output.name };
}
