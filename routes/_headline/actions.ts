"use server";
/**
 * @module
 * The headline's server action: stores a new headline, then `revalidateTag("headline")` drops the
 * cached `/headline` on every worker and instance, so the page shows it on the next load.
 */
import * as v from "valibot";
import { formOf, httpError, requestContext, revalidateTag } from "shell";
import { kvOf } from "shell/data";
import { HEADLINE_KEY } from "./headline.ts";

const Headline = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120));

export async function publish(form: FormData): Promise<void> {
  const text = v.safeParse(Headline, formOf(form).get("headline"));
  if (!text.success) throw httpError(400, "A headline is 1 to 120 characters.");
  const c = requestContext();
  await kvOf(c).set(HEADLINE_KEY, text.output);
  await revalidateTag("headline");
}
