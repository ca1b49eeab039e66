/**
 * @module
 * What happened on the board, and who did it: an entry per task added, moved or deleted, written
 * in the same commit as the task (`commitAll`, docs/data.md "Several collections in one commit"),
 * so the board never shows a change with no entry, nor an entry for a change refused.
 */
import * as v from "valibot";
import { type Collection, collection } from "shell/data";
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
