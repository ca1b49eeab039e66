/**
 * Publishing a headline is limited per client: 5 a minute. Each publication drops the cached
 * `/headline` everywhere (`revalidateTag`), so without a limit anyone could keep it uncached by
 * publishing in a loop. Over the limit the action answers 429 with `Retry-After` and never runs;
 * only the actions in this folder pay for the check.
 */
import { rateLimit } from "shell/data";

export const handler = rateLimit({ name: "headline-publish", limit: 5, windowMs: 60_000 });
