/**
 * @module
 * The JSX runtime (`jsxImportSource` in deno.json). It is React's, except that an element whose
 * type is an island's default export becomes an `<Island>`: that is the whole island convention -
 * no wrapper call, no registration in the route. A named, uncontrolled form field renders through
 * `KeptField`, which puts back what the user typed when the page reloaded because a deploy made it
 * out of date (and does nothing otherwise); a field never kept (`shared/kept_input.ts`) comes after
 * a hidden field that says so to the server, should its form be posted to a removed action. The
 * browser bundle uses React's runtime as is.
 */
import { Fragment, jsx as reactJsx, jsxs as reactJsxs } from "react/jsx-runtime";
import { Island } from "../islands/island.ts";
import { islandOf } from "../islands/registry.ts";
import { fieldKind, KeptField, withUnkeptMark } from "./kept_field.ts";

type Jsx = typeof reactJsx;

function islandAware(create: Jsx): Jsx {
  return (type, props, key) => {
    if (typeof type === "function") {
      const island = islandOf(type);
      if (island) return reactJsx(Island, { island, props }, key);
    } else if (typeof type === "string") {
      const field = fieldKind(type, props as Record<string, unknown>);
      if (field === "kept") {
        const as = type as "input" | "textarea" | "select";
        return reactJsx(KeptField, { as, props, many: create === reactJsxs }, key);
      }
      if (field === "unkept") {
        return withUnkeptMark(create(type, props), props as Record<string, unknown>, key);
      }
    }
    return create(type, props, key);
  };
}

export const jsx: Jsx = islandAware(reactJsx);
export const jsxs: Jsx = islandAware(reactJsxs);
export const jsxDEV: Jsx = jsx;
export { Fragment };
