/**
 * @module
 * The JSX runtime (`jsxImportSource` in deno.json). It is React's, except that an element whose
 * type is an island's default export becomes an `<Island>`: that is the whole island convention -
 * no wrapper call, no registration in the route. A named, uncontrolled form field renders through
 * `KeptField`, which puts back what the user typed when the page reloaded because a deploy made it
 * out of date (and does nothing otherwise). The browser bundle uses React's runtime as is.
 */
import { Fragment, jsx as reactJsx, jsxs as reactJsxs } from "react/jsx-runtime";
import { Island } from "../islands/island.ts";
import { islandOf } from "../islands/registry.ts";
import { isKeptField, KeptField } from "./kept_field.ts";

type Jsx = typeof reactJsx;

function islandAware(create: Jsx): Jsx {
  return (type, props, key) => {
    if (typeof type === "function") {
      const island = islandOf(type);
      if (island) return reactJsx(Island, { island, props }, key);
    } else if (typeof type === "string" && isKeptField(type, props as Record<string, unknown>)) {
      return reactJsx(KeptField, { as: type, props, many: create === reactJsxs }, key);
    }
    return create(type, props, key);
  };
}

export const jsx: Jsx = islandAware(reactJsx);
export const jsxs: Jsx = islandAware(reactJsxs);
export const jsxDEV: Jsx = jsx;
export { Fragment };
