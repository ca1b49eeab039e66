/**
 * @module
 * A stack as a developer reads it in dev (failure screens, the dev server's error page, browser
 * stacks mapped to their sources): project paths relative, and only the app's own frames - those
 * of dependencies, of Deno's internals and of the framework (the folders of `lib/`; an app's own
 * modules there sit at the top of `lib/`) are left out, unless nothing else would be left. Deno
 * wraps a module's syntax error in a `TypeError`; the wrapper goes too. In dev a browser's stack is
 * a client's text: each line is read in time linear in its length.
 */

const FRAME = /^\s+at /;
const CALLER = /^\s+at (?:async )?/;
const POSITION = /:\d+:\d+\)?$/;
const NOT_THE_APPS = /^(?:[a-z][a-z0-9+.-]*:|\/)|(?:^|\/)node_modules\/|^lib\/[^/]+\//;

/** `stack` cleaned; `root`'s file URL, if given, is taken off project paths. */
export function appStack(stack: string, root?: string): string {
  let text = stack.replace(/^TypeError: (SyntaxError: )/, "$1");
  if (root) text = text.replaceAll(`file://${root.endsWith("/") ? root : `${root}/`}`, "");
  const lines = text.split("\n");
  const isFrame = (line: string) => FRAME.test(line);
  const isApps = (line: string) => !NOT_THE_APPS.test(locationOf(line) ?? "/");
  const apps = lines.filter((line) => !isFrame(line) || isApps(line));
  if (apps.some(isFrame) || !lines.some(isFrame)) return apps.join("\n");
  // Nothing of the app's: the framework's frames say where it broke; dependencies' still do not.
  return lines.filter((line) => !isFrame(line) || !/node_modules\/|^\s+at .*ext:/.test(line))
    .join("\n");
}

/**
 * `    at f (file:line:col)`, `    at async file:line:col`: the location's file, read back from the
 * line's end (a pattern with `.*\(` and a lazy group before the end backtracked over both).
 */
function locationOf(line: string): string | undefined {
  const caller = CALLER.exec(line);
  const position = caller && POSITION.exec(line);
  if (!position) return undefined;
  const rest = line.slice(caller[0].length, position.index);
  const paren = rest.lastIndexOf("(");
  return (paren >= 0 && paren < rest.length - 1 ? rest.slice(paren + 1) : rest) || undefined;
}
