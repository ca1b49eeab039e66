/**
 * @module
 * The processes of a process group, read from /proc: what a test checks is gone once the server it
 * started (in a group of its own) was stopped, or its runner was interrupted.
 */

/** The live (not zombie) processes of process group `pgid`. */
export async function groupMembers(pgid: number): Promise<number[]> {
  const members: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`).catch(() => "");
    // After the command's name in parentheses: state, ppid, pgrp.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z") members.push(Number(entry.name));
  }
  return members;
}
