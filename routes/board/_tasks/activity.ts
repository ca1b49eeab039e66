/**
 * @module
 * What happened on the board, and who did it: an entry per task added, moved or deleted, written
 * in the same commit as the task (`commitAll`, docs/data.md "Several collections in one commit"),
 * so the board never shows a change with no entry, nor an entry for a change refused. Only the
 * latest `KEPT` are kept: each commit that adds an entry deletes the ones it pushes out, so the
 * log stays the same size however long the board is used.
 */
import * as v from "valibot";
import { type Collection, collection, type CreateOptions } from "shell/data";
import { STATES } from "./types.ts";

const ActivitySchema = v.object({
  task: v.string(),
  title: v.string(),
  did: v.picklist(["added", ...STATES, "deleted"]),
  by: v.string(),
  at: v.number(),
});

export type Activity = v.InferOutput<typeof ActivitySchema>;

/** Oldest first, by id: `list(kv, { reverse: true })` gives the latest. */
export const activity: Collection<Activity> = collection("activity", { schema: ActivitySchema });

/** How many entries the board shows (the latest). */
export const RECENT = 5;

/**
 * How many entries the board keeps (the latest): 20, give or take the changes committed at the
 * same moment, which each trim what they read.
 */
export const KEPT = 20;

/** The most older entries one commit deletes: a longer log (kept before) shrinks over a few. */
const TRIMMED = 10;

/**
 * The writes that record `change` in the activity: its entry, and the deletion of the entries it
 * pushes past the latest `KEPT`, for the commit of the change itself. It reads the latest
 * entries: make it right before that commit.
 */
export async function recording(kv: Deno.Kv, change: Activity, options?: CreateOptions) {
  const { items } = await activity.list(kv, { reverse: true, limit: KEPT - 1 + TRIMMED });
  const older = items.slice(KEPT - 1).map(({ id }) => activity.deleting(id));
  return [activity.creating(change, options), ...older] as const;
}
