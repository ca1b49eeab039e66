/**
 * @module
 * The API reference, made from the JSDoc of the public entry points with `deno doc`: the index
 * committed as `docs/reference.md` (each entry point's symbols, kind, first sentence and source
 * file), and the whole of it - signatures, members, examples - as HTML, generated on demand
 * (`deno task docs`) into `_build/reference/`, which is not committed: it is 170-odd files that
 * would change with every comment.
 */
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The public entry points, by the alias app code imports them with. */
export const ENTRY_POINTS = [
  { alias: "shell", file: "lib/mod.ts" },
  { alias: "shell/runtime", file: "lib/runtime.ts" },
  { alias: "shell/data", file: "lib/data.ts" },
  { alias: "shell/server", file: "lib/server.ts" },
  { alias: "shell/testing", file: "lib/testing.ts" },
  { alias: "shell/auth", file: "lib/auth.ts" },
] as const;

export const INDEX_FILE = "docs/reference.md";
export const HTML_DIR = "_build/reference";

interface JsDoc {
  doc?: string;
  tags?: { kind: string; doc?: string }[];
}

interface Location {
  filename: string;
  line: number;
}

interface Declaration {
  kind: string;
  jsDoc?: JsDoc;
  location: Location;
  /** A `reference`'s: where the declaration it stands for is. */
  def?: { target?: Location };
}

/** A public symbol, as `deno doc --json` describes it. */
export interface DocSymbol {
  name: string;
  declarations: Declaration[];
}

interface DocModule {
  module_doc?: JsDoc;
  symbols: DocSymbol[];
}

/** Each entry point's module doc and symbols, as `deno doc --json` reads them. */
export async function entryDocs(root: string): Promise<Map<string, DocModule>> {
  const files = ENTRY_POINTS.map(({ file }) => file);
  const json = await deno(root, ["doc", "--json", "-q", ...files]);
  const nodes: Record<string, DocModule> = JSON.parse(json).nodes;
  resolveReferences(Object.values(nodes));
  return new Map(
    Object.entries(nodes).map(([url, module]) => [relativePath(root, url), module]),
  );
}

/**
 * Documenting the entry points together, `deno doc` describes a symbol two of them export
 * (`httpError` in `shell` and `shell/runtime`) once, and in the other only as a `reference` to it:
 * no JSDoc, no kind. Each entry point's list gets the declaration itself.
 */
function resolveReferences(modules: DocModule[]): void {
  const at = (location: Location) => `${location.filename}:${location.line}`;
  const declared = new Map<string, Declaration>();
  for (const { symbols } of modules) {
    for (const { declarations } of symbols) {
      for (const declaration of declarations) {
        if (declaration.kind !== "reference") declared.set(at(declaration.location), declaration);
      }
    }
  }
  for (const { symbols } of modules) {
    for (const symbol of symbols) {
      symbol.declarations = symbol.declarations.map((declaration) => {
        const target = declaration.def?.target;
        return (target && declared.get(at(target))) ?? declaration;
      });
    }
  }
}

/** `docs/reference.md`, formatted as `deno fmt` formats it. */
export async function referenceIndex(root: string): Promise<string> {
  const docs = await entryDocs(root);
  const lines = [
    "# API reference",
    "",
    "<!-- Written by `deno task docs` from the JSDoc of the entry points: edit those, not this. -->",
    "",
    "What an app imports from the framework, by entry point. Each symbol's JSDoc says what it does",
    "and shows it in use (`@example`); your editor shows it on hover. `deno task docs` renders the",
    `whole reference \u2014 signatures, members, examples \u2014 as HTML in \`${HTML_DIR}/index.html\`.`,
    "[Architecture](architecture.md#the-public-api-its-entry-points) says which entry is for what.",
  ];
  for (const { alias, file } of ENTRY_POINTS) {
    const module = docs.get(file);
    if (!module) throw new Error(`deno doc did not document ${file}`);
    lines.push("", `## \`${alias}\` (\`${file}\`)`, "");
    lines.push(firstParagraph(module.module_doc?.doc ?? ""), "");
    for (const symbol of module.symbols) {
      const [declaration] = symbol.declarations;
      const source = relativePath(root, declaration.location.filename);
      const kind = KINDS[declaration.kind] ?? declaration.kind;
      const summary = firstSentence(declaration.jsDoc?.doc ?? "");
      lines.push(`- [\`${symbol.name}\`](../${source}) (${kind}): ${summary}`);
    }
  }
  return await deno(root, ["fmt", "--ext=md", "-"], lines.join("\n") + "\n");
}

/** Writes the index and renders the HTML reference. */
export async function writeReference(root: string): Promise<void> {
  await Deno.writeTextFile(join(root, INDEX_FILE), await referenceIndex(root));
  // `deno doc --html` makes its own folder but not its parent: a fresh clone has no `_build/`.
  await Deno.mkdir(join(root, HTML_DIR), { recursive: true });
  await deno(root, [
    "doc",
    "--html",
    "-q",
    "--name=shell",
    `--output=${HTML_DIR}`,
    ...ENTRY_POINTS.map(({ file }) => file),
  ]);
}

const KINDS: Record<string, string> = {
  function: "function",
  class: "class",
  interface: "interface",
  typeAlias: "type",
  variable: "constant",
};

function firstParagraph(doc: string): string {
  return doc.trim().split(/\n\s*\n/)[0].replace(/\s+/g, " ");
}

/** Up to the first full stop that ends a sentence (not one inside `code`). */
function firstSentence(doc: string): string {
  const text = firstParagraph(doc);
  let inCode = false;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "`") inCode = !inCode;
    else if (!inCode && text[i] === "." && (i === text.length - 1 || text[i + 1] === " ")) {
      return text.slice(0, i + 1);
    }
  }
  return text;
}

function relativePath(root: string, url: string): string {
  return relative(root, fileURLToPath(url)).split("\\").join("/");
}

async function deno(root: string, args: string[], input?: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    stdin: input === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (input !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
  }
  const { code, stdout, stderr } = await child.output();
  if (code !== 0) {
    throw new Error(`deno ${args[0]} failed:\n${new TextDecoder().decode(stderr)}`);
  }
  return new TextDecoder().decode(stdout);
}
