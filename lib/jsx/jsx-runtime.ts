/**
 * @module
 * The JSX runtime (`jsxImportSource` in deno.json). It is React's, except that an element whose
 * type is an island's default export becomes an `<Island>`: that is the whole island convention —
 * no wrapper call, no registration in the route. The browser bundle uses React's runtime as is.
 */
import { Fragment, jsx as reactJsx, jsxs as reactJsxs } from "react/jsx-runtime";
import { Island } from "../islands/island.ts";
import { islandOf } from "../islands/registry.ts";

type Jsx = typeof reactJsx;

function islandAware(create: Jsx): Jsx {
  return (type, props, key) => {
    const island = typeof type === "function" ? islandOf(type) : undefined;
    return island ? reactJsx(Island, { island, props }, key) : create(type, props, key);
  };
}

export const jsx: Jsx = islandAware(reactJsx);
export const jsxs: Jsx = islandAware(reactJsxs);
export const jsxDEV: Jsx = jsx;
export { Fragment };
