/**
 * @module
 * Puts what the user typed back into the page's fields when the page reloaded because it was out
 * of date (`shared/kept_input.ts`): the JSX runtime renders every named, uncontrolled `<input>`,
 * `<textarea>` and `<select>` of the app through `KeptField`, which - only on such a render - gives
 * the field the value that was sent under its name (the n-th field of a name gets its n-th value).
 * No JSX here, as in `islands/island.ts`: the JSX runtime imports this module.
 */
import { Fragment, type Key, type ReactElement, type ReactNode, use } from "react";
// React's own, not ours: the field itself is no island, nor kept again.
import { jsx, jsxs } from "react/jsx-runtime";
import { RenderContext } from "../render/context.ts";
import {
  isKeepable,
  isKeptType,
  isSensitiveField,
  KEEP_ATTRIBUTE,
  keptByName,
  type KeptInput,
  UNKEPT_FIELD,
} from "../shared/kept_input.ts";

/** What a render hands out: each name's values, in order. */
export interface KeptFields {
  /** The next value sent under `name`, if any is left. */
  next(name: string): string | undefined;
  /** Every value sent under `name`. */
  all(name: string): string[] | undefined;
}

export function keptFields(kept: KeptInput): KeptFields {
  const byName = keptByName(kept);
  const taken = new Map<string, number>();
  return {
    next(name) {
      const values = byName.get(name);
      const at = taken.get(name) ?? 0;
      taken.set(name, at + 1);
      return values?.[at];
    },
    all: (name) => byName.get(name),
  };
}

type Props = Record<string, unknown>;

/**
 * How the JSX runtime renders an element of `type` with `props`: `kept`, through `KeptField`;
 * `unkept`, a field never kept for its type or attributes (but not its name), after its
 * `UNKEPT_FIELD` (`withUnkeptMark`); neither, as it is.
 */
export function fieldKind(type: string, props: Props): "kept" | "unkept" | undefined {
  if (typeof props.name !== "string" || props.name === "") return undefined;
  if (type !== "input" && type !== "textarea" && type !== "select") return undefined;
  const kind = type === "input" && typeof props.type === "string"
    ? props.type.toLowerCase()
    : "text";
  // A form without JavaScript posts a password with the rest, under any name, and the server sees
  // no type. A name never kept needs no mark: a form posting to a route, not an action, sees it.
  if (kind === "password" || isSensitiveField(props.autoComplete, props[KEEP_ATTRIBUTE])) {
    return isKeepable(props.name) ? "unkept" : undefined;
  }
  if (!isKeptType(kind)) return undefined; // files, hidden fields, buttons
  // Controlled fields belong to their component's state.
  if (kind === "checkbox" || kind === "radio") {
    return props.checked === undefined ? "kept" : undefined;
  }
  return props.value === undefined ? "kept" : undefined;
}

/**
 * `field` (with `props`) after the hidden field that tells a form's post never to keep it: in the
 * field's own form, which its `form` attribute may name.
 */
export function withUnkeptMark(field: ReactNode, props: Props, key: Key | undefined): ReactElement {
  const mark = jsx("input", {
    type: "hidden",
    name: UNKEPT_FIELD,
    value: props.name,
    form: props.form,
  });
  return jsxs(Fragment, { children: [mark, field] }, key);
}

/**
 * `as` with `props`, and the value sent under its name when the render has one. `many`: the
 * children are a static list (`jsxs`), as the JSX runtime was called.
 */
export function KeptField(
  { as, props, many }: { as: "input" | "textarea" | "select"; props: Props; many: boolean },
): ReactNode {
  const create = many ? jsxs : jsx;
  const kept = use(RenderContext)?.kept;
  const put = kept && putBack(kept, as, props);
  return create(as, put ? { ...props, ...put } : props);
}

/** The props that put back what was sent under the field's name; none if nothing was. */
function putBack(kept: KeptFields, as: string, props: Props): Props | undefined {
  const name = props.name as string;
  const kind = typeof props.type === "string" ? props.type.toLowerCase() : "text";
  if (as === "input" && (kind === "checkbox" || kind === "radio")) {
    const values = kept.all(name);
    return values && { defaultChecked: values.includes(String(props.value ?? "on")) };
  }
  if (as === "select") {
    const values = kept.all(name);
    return values && { defaultValue: props.multiple ? values : values[0] };
  }
  const value = kept.next(name);
  if (value === undefined) return undefined;
  // A textarea's text may have been given as its children.
  return as === "textarea" ? { defaultValue: value, children: undefined } : { defaultValue: value };
}
