/**
 * @module
 * The project's salt, `actions.salt` at its root, committed with the code: the key of the server
 * actions' ids (`actions.ts`), so that an action keeps its id in every build, on every machine and
 * every deploy, while the id still says nothing about where the action lives. The first build that
 * finds no salt writes a random one and says to commit it. A build from a clean clone where it was
 * never committed makes a new one each time: every action then gets a new id at each deploy, and
 * an open tab calling one gets the stale-client answer (docs/deploying.md) - gently, but
 * needlessly.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { BuildProblem } from "./problem.ts";

export const SALT_FILE = "actions.salt";

/** Shorter than this, a salt could be guessed: refused rather than used. */
const MIN_LENGTH = 16;

/** The salt of the project at `root`, made (and announced on stderr) when there is none. */
export async function projectSalt(root: string): Promise<string> {
  const path = join(root, SALT_FILE);
  const existing = await readSalt(path);
  if (existing !== undefined) return existing;
  const salt = randomBytes(24).toString("base64url");
  try {
    // `createNew`: two builds at once keep the first one's.
    await Deno.writeTextFile(path, `${salt}\n`, { createNew: true });
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return (await readSalt(path))!;
    throw error;
  }
  console.error(
    `Wrote ${SALT_FILE}: server action ids are keyed with it. Commit it, so that every build ` +
      "and deploy gives an action the same id (docs/deploying.md).",
  );
  return salt;
}

async function readSalt(path: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  const salt = text.trim();
  if (salt.length < MIN_LENGTH || /\s/.test(salt)) {
    throw new BuildProblem(
      `${SALT_FILE}: expected one word of at least ${MIN_LENGTH} characters (delete the file ` +
        "and build: a new one is made, and every action gets a new id)",
    );
  }
  return salt;
}
