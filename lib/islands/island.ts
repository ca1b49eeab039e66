/**
 * @module
 * How an island renders on the server: its HTML inside an `<app-island>` marker that carries the
 * name, the chunk and the props, plus the preloads for its chunks and the links to its
 * stylesheets; and it marks the page as one that runs JavaScript (`RenderContextValue.islands`),
 * for the telemetry's tags (`render/islands_head.ts`). The browser side is `client/boot.ts`. No JSX
 * here: the app's JSX runtime turns island components into this one, and a module of its own with
 * JSX would import that runtime back (a cycle, which `tests/process/imports_test.ts` finds - Deno
 * reads no `@jsxImportSource` from a line comment).
 */
import { createElement, type ReactNode, use } from "react";
import { preinitModule, preloadModule } from "react-dom";
import { RenderContext } from "../render/context.ts";
import { InsideIsland } from "../shared/inside_island.ts";
import { linkStylesheets } from "../render/styles.ts";
import { serializeProps } from "../shared/props.ts";
import type { IslandInfo } from "./registry.ts";

const CONTENTS = { display: "contents" } as const;

export function Island(
  { island, props }: {
    island: IslandInfo;
    props: Record<string, unknown> & { children?: ReactNode };
  },
): ReactNode {
  const Component = island.component;
  if (use(InsideIsland)) return createElement(Component, props);

  const render = use(RenderContext);
  if (!render) throw new Error(`Island <${island.name}> rendered outside the framework's renderer`);
  const chunks = render.assets.islands[island.name];
  const { boot } = render.assets;
  preinitModule(boot.entry, { as: "script", nonce: render.nonce });
  for (const chunk of [...boot.imports, chunks.entry, ...chunks.imports]) {
    preloadModule(chunk, { as: "script" });
  }
  // In the server's HTML of every page that renders it: no unstyled flash while its script loads.
  linkStylesheets(render.islandStyles?.[island.name]);

  const { children, ...data } = props;
  // Children are server-rendered HTML the browser keeps as is; islands among them are islands of
  // their own.
  const staticChildren = children === undefined ? undefined : createElement(
    InsideIsland,
    { value: false },
    createElement("island-children", { style: CONTENTS }, children),
  );
  render.islands = true;
  return createElement(
    "app-island",
    {
      name: island.name,
      src: chunks.entry,
      // No secret setting's value goes out in props: each value is checked, when the app has any.
      props: serializeProps(island.name, data, render.settings?.secretIn),
      style: CONTENTS,
    },
    createElement(InsideIsland, { value: true }, createElement(Component, data, staticChildren)),
  );
}
