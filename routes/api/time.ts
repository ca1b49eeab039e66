import type { Handlers } from "shell";

/** An API route: a handler and no page. */
export const handler: Handlers = {
  GET() {
    return Response.json({ now: new Date().toISOString() });
  },
};
