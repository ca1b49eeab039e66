/**
 * @module
 * An app in memory for the action endpoint's tests: the probe actions (`probe_actions.ts`, as if
 * at `routes/_probe/actions.ts`) with a page whose forms post to them, and the test app's wall
 * (page, island and action, `tests/fixture/`). `call` is what the browser stub sends; `fromPage`
 * the headers a browser sends with a POST from one of our pages.
 */
import Wall from "../fixture/islands/Wall.tsx";
import * as wallActions from "../fixture/routes/_wall/actions.ts";
import * as appModule from "../fixture/routes/_app.tsx";
import * as wallPage from "../fixture/routes/wall.tsx";
import * as layoutModule from "../fixture/routes/_layout.tsx";
import { encodeCall } from "../../lib/shared/action_wire.ts";
import type { App } from "../../lib/server.ts";
import { actionIdOf, type AppFiles } from "./app.ts";
import * as probe from "./probe_actions.ts";

export { ACTION_SECRET as SECRET } from "./fixtures.ts";

const PROBE = "routes/_probe/actions.ts";
const WALL = "routes/_wall/actions.ts";

/** What the in-process app's requests come from: Hono's `app.request` makes them `localhost`. */
export const ORIGIN = "http://localhost";

export const probeFiles: AppFiles = {
  routes: {
    "_app.tsx": appModule,
    "_layout.tsx": layoutModule,
    "wall.tsx": wallPage,
    "probe.tsx": {
      default: () => (
        <>
          <title>Probe</title>
          <form action={probe.toAbout} id="to-about">
            <button type="submit">To about</button>
          </form>
          <form action={probe.late} id="late">
            <input name="note" />
            <button type="submit">Late</button>
          </form>
        </>
      ),
    },
  },
  islands: { Wall },
  actions: { [PROBE]: probe, [WALL]: wallActions },
};

/** The ids of the probe's actions and the wall's `post`. */
export const ids = {
  ...Object.fromEntries(Object.keys(probe).map((name) => [name, actionIdOf(PROBE, name)])),
  post: actionIdOf(WALL, "post"),
} as Record<keyof typeof probe | "post", string>;

/** What a browser sends with a POST from one of our pages. */
export function fromPage(page = "/probe"): Record<string, string> {
  return { Origin: ORIGIN, "Sec-Fetch-Site": "same-origin", Referer: ORIGIN + page };
}

/** An island's call of action `id` with `args`, as the stub posts it. */
export async function call(
  app: App,
  id: string,
  args: unknown[],
  headers: Record<string, string> = fromPage(),
): Promise<Response> {
  return await app.request(`/_action/${id}`, {
    method: "POST",
    body: encodeCall(args),
    headers: { Accept: "application/json", ...headers },
  });
}

/** A POST of `body` to action `id`. */
export async function post(
  app: App,
  id: string,
  body: BodyInit,
  headers: HeadersInit,
): Promise<Response> {
  return await app.request(`/_action/${id}`, { method: "POST", body, headers });
}

/** The probe actions that ran, in order, from the captured log lines. */
export function ran(lines: Record<string, unknown>[]): string[] {
  return lines.flatMap((line) => typeof line.probe === "string" ? [line.probe] : []);
}
