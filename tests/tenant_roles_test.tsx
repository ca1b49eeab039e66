/**
 * @module
 * Roles per organisation, as docs/users.md ("Roles per organisation") shows them: a user's role in
 * each team, checked by one function in the `[team]` folder's middleware for pages and in each
 * action with the team as an argument, because an action's call has no URL params
 * (docs/actions.md, "Actions of a [param] folder"). A member of one team never reads or changes
 * another's, by URL or by an action called with the other team's id; a guard in the `[team]` folder
 * reads no team on an action's call.
 */
import assert from "node:assert/strict";
import { type AnyContext, httpError, type Middleware, requestContext } from "../lib/mod.ts";
import { createUser, currentUser, requireUser } from "../lib/auth.ts";
import { kvOf } from "../lib/data.ts";
import { TestClient } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";

type TeamRole = "viewer" | "admin";

async function requireTeamRole(c: AnyContext, team: unknown, ...roles: TeamRole[]) {
  const user = await currentUser(c);
  if (!user) throw httpError(401, "Sign in to continue.");
  // From the client (a URL, an action's argument): no team's id is anything else, and KV throws on
  // a key part that is not one or a key too long.
  if (typeof team !== "string" || team.length > 100) throw httpError(404, "No such team.");
  const role = (await kvOf(c).get<TeamRole>(["team_roles", team, user.id])).value;
  if (!role) throw httpError(404, "No such team.");
  if (roles.length > 0 && !roles.includes(role)) throw httpError(403, "Only a team's admin.");
  return { user, role };
}

const member: Middleware = async function member(c, next) {
  await requireTeamRole(c, c.req.param("team") ?? "");
  await next();
};

async function renameTeam(team: string, form: FormData): Promise<void> {
  const c = requestContext();
  await requireTeamRole(c, team, "admin");
  await kvOf(c).set(["team_names", team], String(form.get("name")));
}

/** What a guard of the `[team]` folder reads on an action's call of a module in that folder. */
let seenByGuard: string | undefined = "not run";
const recordTeam: Middleware = async function recordTeam(c, next) {
  seenByGuard = c.req.param("team");
  await next();
};
function inTeamFolder(): Promise<string> {
  return Promise.resolve("ran");
}

const kv = await Deno.openKv(":memory:");
const app = memoryApp({
  routes: {
    "teams/[team]/_middleware.ts": { handler: [requireUser(), member] },
    "teams/[team]/index.tsx": {
      default: ({ params }: { params: { team: string } }) => (
        <form action={renameTeam.bind(null, params.team)} aria-label="Rename">
          <input name="name" />
        </form>
      ),
    },
    "login.tsx": { default: () => <p>Log in</p> },
    "probe/[team]/_middleware.ts": { handler: recordTeam },
    "probe/[team]/index.tsx": { default: () => <p>probe</p> },
  },
  actions: {
    "routes/_teams/actions.ts": { renameTeam },
    "routes/probe/[team]/_actions.ts": { inTeamFolder },
  },
}, { kv });

const ada = await createUser(kv, { email: "ada@example.com", password: "unused by these tests" });
await kv.set(["team_roles", "north", ada.id], "admin");
await kv.set(["team_roles", "south", ada.id], "viewer");
const bo = await createUser(kv, { email: "bo@example.com", password: "unused by these tests" });
await kv.set(["team_roles", "east", bo.id], "admin");

Deno.test("a team's pages: its members only, 404 for a team the user is not in", async () => {
  const client = new TestClient(app);
  const signedOut = await client.request("/teams/north");
  assert.equal(signedOut.status, 303);
  await signedOut.body?.cancel();
  await client.signInAs(bo);
  for (const [path, status] of [["/teams/east", 200], ["/teams/north", 404]] as const) {
    const page = await client.get(path);
    assert.equal(page.status, status, path);
    await page.body?.cancel();
  }
});

Deno.test("an action checks the role in the team it acts on, with JavaScript and without", async () => {
  const client = new TestClient(app);
  await client.signInAs(ada);
  const form = new FormData();
  form.set("name", "North");
  await client.call(renameTeam, "north", form);
  assert.equal((await kv.get(["team_names", "north"])).value, "North");
  // A viewer of south: 403, even though an admin of north; bo, not in north at all: 404.
  await assert.rejects(client.call(renameTeam, "south", form), { status: 403 });
  const bos = new TestClient(app);
  await bos.signInAs(bo);
  await assert.rejects(bos.call(renameTeam, "north", form), { status: 404 });
  // A team no id is, from a hostile client: 404 like any team the user is not in, not a 500.
  for (const team of ["x".repeat(3_000), { team: "north" }, ["north"]]) {
    await assert.rejects(client.call(renameTeam, team as string, form), { status: 404 });
  }
  const long = await client.get(`/teams/${"y".repeat(2_500)}`);
  assert.equal(long.status, 404);
  await long.body?.cancel();
  const posted = await client.submit("/teams/south", { fields: { name: "South" } });
  assert.equal(posted.status, 403);
  await posted.body?.cancel();
  assert.equal((await kv.get(["team_names", "south"])).value, null);
});

Deno.test("a [team] folder's guard reads the team on a page, and none on an action's call", async () => {
  const client = new TestClient(app);
  const page = await client.get("/probe/west");
  await page.body?.cancel();
  assert.equal(seenByGuard, "west");
  assert.equal(await client.call(inTeamFolder), "ran");
  assert.equal(seenByGuard, undefined);
});
