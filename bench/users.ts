/**
 * @module
 * What users and sessions cost: a signed-in page against the same page anonymous — `/guestbook`,
 * whose handler asks who is signed in (`currentUser`: one KV read with the session cookie, none
 * without) — loaded in turn on one `deno task start` server, round after round, so the machine's
 * drift does not pass for a cost; and the time of one password hash (scrypt, the parameters
 * sign-up and sign-in use), median of a few, in this process. The user is made as the docs make the
 * first admin (`deno task users:add`) and signs in through `/login`'s form with JavaScript off.
 */
import { join } from "node:path";
import { cpuUsage } from "node:process";
import { hashPassword } from "../lib/auth/password.ts";
import { type Running, start } from "./process.ts";
import { fmt, median, type Row } from "./report.ts";
import { wrk, type WrkResult } from "./wrk.ts";

export interface UsersOptions {
  root: string;
  seconds: number;
  connections: number;
  rounds: number;
  progress(message: string): void;
}

export interface UsersResults {
  anonymous: WrkResult[];
  signedIn: WrkResult[];
  ratio: number;
  extraMs: number;
  hashMs: number[];
  hashCpuMs: number[];
}

/**
 * What a signed-in page may add to the same page anonymous, in ms a request at saturation (the
 * server's time per request, 1000 / req/s): one KV read of the session, and nothing per page view
 * besides (no write, no hash). A KV read on this machine's SQLite store is 0.06–0.1 ms.
 */
export const SIGNED_IN_EXTRA_MS = 0.15;

const EMAIL = "bench@example.com";
const PASSWORD = "a bench passphrase";
const PAGE = "/guestbook";

export async function measureUsers(
  options: UsersOptions,
): Promise<{ rows: Row[]; results: UsersResults }> {
  const { root, seconds, connections, rounds, progress } = options;
  const dir = await Deno.makeTempDir({ prefix: "bench-users-" });
  const env = { KV_PATH: join(dir, "kv.sqlite3") };
  const add = new Deno.Command(Deno.execPath(), {
    args: ["task", "users:add", EMAIL],
    cwd: root,
    env,
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const writer = add.stdin.getWriter();
  await writer.write(new TextEncoder().encode(`${PASSWORD}\n`));
  await writer.close();
  const added = await add.output();
  if (!added.success) {
    throw new Error(`users:add failed: ${new TextDecoder().decode(added.stderr)}`);
  }

  await using server = await start(root, ["task", "start"], env);
  const cookie = await logIn(server);
  const load = { seconds, connections };
  const anonymous: WrkResult[] = [];
  const signedIn: WrkResult[] = [];
  await wrk(server.origin + PAGE, load); // warm-up
  await wrk(server.origin + PAGE, { ...load, headers: { Cookie: cookie } });
  for (let round = 0; round < 2 * rounds; round++) {
    progress(`users: ${PAGE} anonymous and signed in, in turn, round ${round + 1}/${2 * rounds}`);
    const order = round % 2 === 0 ? ["anonymous", "signed in"] : ["signed in", "anonymous"];
    for (const who of order) {
      const headers = who === "signed in" ? { Cookie: cookie } : undefined;
      (who === "signed in" ? signedIn : anonymous).push(
        await wrk(server.origin + PAGE, { ...load, headers }),
      );
    }
  }
  await server.stop();
  await Deno.remove(dir, { recursive: true });

  progress("users: password hashes");
  // Wall time waits on a shared machine's other work; CPU time (the hashing thread's, the
  // process's) is what a hash costs.
  const hashMs: number[] = [];
  const hashCpuMs: number[] = [];
  await hashPassword(PASSWORD);
  for (let i = 0; i < 7; i++) {
    const began = performance.now();
    const cpu = cpuUsage();
    await hashPassword(PASSWORD);
    const { user, system } = cpuUsage(cpu);
    hashMs.push(performance.now() - began);
    hashCpuMs.push((user + system) / 1000);
  }

  const ratio = median(signedIn.map((run, i) => run.rps / anonymous[i].rps));
  // Each round's pair was measured back to back: its difference is the session's cost.
  const extraMs = median(signedIn.map((run, i) => 1000 / run.rps - 1000 / anonymous[i].rps));
  const errors = [...anonymous, ...signedIn].reduce((n, r) => n + r.socketErrors + r.non2xx3xx, 0);
  const rps = (runs: WrkResult[]) => median(runs.map((run) => run.rps));
  const p99 = (runs: WrkResult[]) => median(runs.map((run) => run.p99Ms));
  const rows: Row[] = [
    {
      measure: `Users: ${PAGE} signed in vs anonymous: added time a request (req/s, p99)`,
      value: `+${extraMs.toFixed(3)} ms (${fmt.rps(rps(signedIn))} vs ${
        fmt.rps(rps(anonymous))
      } = ${fmt.ratio(ratio)}; p99 ${fmt.ms(p99(signedIn))} vs ${fmt.ms(p99(anonymous))})`,
      target: `≤ +${SIGNED_IN_EXTRA_MS} ms`,
      pass: extraMs <= SIGNED_IN_EXTRA_MS && errors === 0,
    },
    {
      measure: "Users: one password hash, scrypt N=2^15, r=8, p=3 (CPU / wall, median of 7)",
      value: `${fmt.ms(median(hashCpuMs))} / ${fmt.ms(median(hashMs))}`,
      target: "—",
    },
  ];
  return { rows, results: { anonymous, signedIn, ratio, extraMs, hashMs, hashCpuMs } };
}

/** Signs in through `/login`'s form as a browser without JavaScript does; the session cookie. */
async function logIn(server: Running): Promise<string> {
  const html = await (await fetch(server.origin + "/login")).text();
  const form = /<form[^>]*action="(\/_action\/[^"]+)"[^>]*>(.*?)<\/form>/s.exec(html);
  if (!form) throw new Error("/login renders no form");
  const fields = new FormData();
  for (
    const [, name, value = ""] of form[2].matchAll(
      /<input type="hidden" name="([^"]+)"(?: value="([^"]*)")?/g,
    )
  ) {
    fields.append(name, value.replaceAll("&quot;", '"').replaceAll("&amp;", "&"));
  }
  fields.set("email", EMAIL);
  fields.set("password", PASSWORD);
  const res = await fetch(server.origin + form[1], {
    method: "POST",
    body: fields,
    redirect: "manual",
    headers: { Origin: server.origin },
  });
  await res.body?.cancel();
  const cookie = res.headers.getSetCookie().find((line) => /^session=[^;]/.test(line));
  if (res.status !== 303 || !cookie) throw new Error(`signing in answered ${res.status}`);
  return cookie.split(";")[0];
}
