/**
 * @module
 * Server side of islands: which components are islands, and how one renders — its HTML inside an
 * `<app-island>` marker that carries the name, the chunk and the props, plus the preloads for its
 * chunks. The browser side is `client/boot.ts`.
 */
import {
  type ComponentType,
  createContext,
  createElement,
  type CSSProperties,
  type ReactNode,
  use,
} from "react";
import { preinitModule, preloadModule } from "react-dom";
import { serializeProps } from "./props.ts";
import { RenderContext } from "./render_context.ts";

export interface IslandInfo {
  name: string;
  component: ComponentType<Record<string, unknown>>;
}

// deno-lint-ignore ban-types
const islands = new WeakMap<Function, IslandInfo>();

export function registerIsland(name: string, component: IslandInfo["component"]): void {
  islands.set(component, { name, component });
}

// deno-lint-ignore ban-types
export function islandOf(type: Function): IslandInfo | undefined {
  return islands.get(type);
}

const CONTENTS = { display: "contents" } as const;

/** True below an island's root: nested islands hydrate as part of their parent. */
const InsideIsland = createContext(false);

export function Island(
  { island, props }: {
    island: IslandInfo;
    props: Record<string, unknown> & { children?: ReactNode };
  },
) {
  const Component = island.component;
  // React's own createElement: JSX here would turn the component into an island again.
  if (use(InsideIsland)) return createElement(Component, props);

  const render = use(RenderContext);
  if (!render) throw new Error(`Island <${island.name}> rendered outside the framework's renderer`);
  const chunks = render.assets.islands[island.name];
  const { boot } = render.assets;
  preinitModule(boot.entry, { as: "script", nonce: render.nonce });
  for (const chunk of [...boot.imports, chunks.entry, ...chunks.imports]) {
    preloadModule(chunk, { as: "script" });
  }

  const { children, ...data } = props;
  return (
    <app-island
      name={island.name}
      src={chunks.entry}
      props={serializeProps(island.name, data)}
      style={CONTENTS}
    >
      <InsideIsland value>
        {createElement(
          Component,
          data,
          children === undefined ? undefined : (
            // Children are server-rendered HTML the browser keeps as is; islands among them are
            // islands of their own.
            <InsideIsland value={false}>
              <island-children style={CONTENTS}>{children}</island-children>
            </InsideIsland>
          ),
        )}
      </InsideIsland>
    </app-island>
  );
}

declare module "react" {
  namespace JSX {
    interface IntrinsicElements {
      "app-island": {
        name: string;
        src: string;
        props: string;
        style: CSSProperties;
        children?: ReactNode;
      };
      "island-children": { style: CSSProperties; children?: ReactNode };
    }
  }
}
