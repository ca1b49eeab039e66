/**
 * @module
 * Which changes to `static/` the open pages can take by swapping stylesheets, with no restart of
 * the app's server: a stylesheet it listed as it started and still has. It read each file's
 * validators (ETag) once, at its start, so until its next start it would answer a reload's
 * revalidation of a changed one with a 304 for the old one: the dev server drops the request's
 * validators for those (`stale`).
 */
import { existsSync, readdirSync } from "node:fs";
import { extname, join, relative, sep } from "node:path";

export interface Stylesheets {
  /** The app's server is starting: it lists the files as they are now. */
  serverStarting(): void;
  /** The stylesheets among `files` (`static/...`) that can be swapped, as URL paths. */
  swappable(files: string[]): string[];
  /** The pages swapped these (URL paths). */
  swapped(hrefs: string[]): void;
  /** Whether the server's validators for a URL path are out of date. */
  stale(path: string): boolean;
}

export function stylesheets(root: string): Stylesheets {
  let served = new Set<string>();
  const changed = new Set<string>();
  return {
    serverStarting() {
      served = new Set(filesBelow(root, "static"));
      changed.clear();
    },
    swappable: (files) =>
      files.filter((file) =>
        extname(file) === ".css" && served.has(file) && existsSync(join(root, file))
      ).map((file) => file.slice("static".length)),
    swapped(hrefs) {
      for (const href of hrefs) changed.add(href);
    },
    stale: (path) => changed.has(path),
  };
}

/** The files below `root/folder`, as `folder/...` paths; none if it does not exist. */
function filesBelow(root: string, folder: string): string[] {
  try {
    return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join("/"));
  } catch {
    return [];
  }
}
