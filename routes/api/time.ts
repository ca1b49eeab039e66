import type { Handlers } from "../../lib/mod.ts";

/** An API route: a handler and no page. */
export const handler: Handlers = {
  GET() {
    return Response.json({ now: new Date().toISOString() });
  },
};
