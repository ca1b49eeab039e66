"use server";
/**
 * @module
 * The guestbook's server action. The form reaches it with or without JavaScript; a signing that
 * does not pass the schema comes back as field errors for the form to show, not as a failure.
 */
import { z } from "zod";
import { addEntry, type GuestbookState, latestEntries } from "./entries.ts";

const Signing = z.object({
  name: z.string().trim().min(1, "Please tell us your name.").max(40, "40 characters at most."),
  message: z.string().trim().min(3, "Say a little more: 3 characters at least.")
    .max(140, "140 characters at most."),
});

export async function sign(_previous: GuestbookState, form: FormData): Promise<GuestbookState> {
  // Anyone can post to an action: a request without the form's fields signs nothing.
  if (!(form instanceof FormData)) form = new FormData();
  const parsed = await Signing.safeParseAsync(Object.fromEntries(form));
  if (!parsed.success) {
    return {
      entries: latestEntries(),
      errors: z.flattenError(parsed.error).fieldErrors,
      values: { name: String(form.get("name") ?? ""), message: String(form.get("message") ?? "") },
    };
  }
  addEntry({ ...parsed.data, at: new Date() });
  return { entries: latestEntries(), signed: parsed.data.name };
}
