/**
 * @module
 * A page older than the server's build moving to the new version without losing what the user
 * typed. `reloadKeepingInput()` keeps what each named field the user changed holds now - emptied,
 * unchecked, unselected too; never a field they left alone (`touched.ts`), nor a password, a file,
 * a hidden or a sensitive field (`shared/kept_input.ts`) - in the tab's `sessionStorage` for a
 * minute (nothing when nothing changed and there is nothing to say), and reloads; the new page's
 * runtime (`restoreKeptInput()`, from the boot runtime) puts each back into its field: a checkbox
 * or radio of the same name and value, any other the n-th field of its name - and, when an action
 * the user asked for did not run, says why in one sentence, unless the server did already (it puts
 * back what a form sent, too: `actions/stale.ts`); when it broke on what the new server sent,
 * another sentence, since what the user did may have run. An action's form gets a mark for each
 * password or field never kept for its attributes (`withUnkeptMarks`). A page that reloaded so
 * and is out of date again at once (a rollout still under way) waits a little before the next
 * reload, the sentence on show, and longer each time the reload brought back the same old build:
 * never a loop. Part of the action client's bundle, which the boot
 * runtime loads only when a page must move or has just moved (`boot.ts`): no page pays for it
 * before; nothing runs as it loads.
 */
import {
  isKeepable,
  isKeptType,
  isSensitiveField,
  KEEP_ATTRIBUTE,
  keptByName,
  MAX_KEPT_FIELDS,
  NOTICE_ATTRIBUTE,
  RELOADED_NOTICE,
  STALE_NOTICE,
  UNKEPT_FIELD,
} from "../shared/kept_input.ts";
import { wasTouched } from "./touched.ts";
import { KEPT, pageBuild } from "./versions.ts";

const RELOADED = "app-stale-reload";
/** How long kept input waits for the page to come back: as long as the server's cookie. */
const KEPT_MS = 60_000;
/** Reloads for being out of date come at least this far apart... */
const RELOAD_GAP_MS = 10_000;
/** ...and twice as far as the last while each brings back the build it left, up to this. */
const MAX_RELOAD_GAP_MS = 160_000;

/** The last reload for being out of date: when, from which build, and how many came back so. */
interface Reloaded {
  at: number;
  from?: string;
  repeats: number;
}

type Field = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

/**
 * What the new page says about the reload: `not-run`, an action the user asked for did not run
 * (`STALE_NOTICE`); `unsure`, the page broke on what the new server sent (`RELOADED_NOTICE`).
 * None: nothing the user did was lost (a script gone past the retention), so nothing to say.
 */
export type Notice = "not-run" | "unsure";

const SENTENCES: Record<Notice, string> = {
  "not-run": STALE_NOTICE,
  unsure: RELOADED_NOTICE,
};

/** A field the user changed: its key (`keyed`) and what it holds - a select's chosen values. */
type Changed = [key: string, state: string | boolean | string[]];

interface Kept {
  page: string;
  at: number;
  changed: Changed[];
  /** What a page of an earlier build kept instead: every field's value, as a form sends them. */
  fields?: [name: string, value: string][];
  notice?: Notice;
}

let reloading = false;

/**
 * Keeps what the page's fields hold, and reloads the page (at once, or once the gap has passed).
 * With a `notice`, the new page says why in one sentence.
 */
export function reloadKeepingInput({ notice }: { notice?: Notice }): void {
  if (reloading) return;
  reloading = true;
  let last: Reloaded | undefined;
  try {
    last = JSON.parse(sessionStorage.getItem(RELOADED) ?? "null") ?? undefined;
  } catch { /* storage off: the server still has what a form sent */ }
  // The last reload brought back the build it left, which is out of date again at once: an old
  // worker answered it (a rollout), or a CDN's copy of the page (its `s-maxage`). So may the next:
  // each such reload waits twice as long as the last, not a reload every 10 s for as long as that
  // lasts.
  const from = pageBuild();
  const cameBack = !!from && last?.from === from && Date.now() - last.at < RELOAD_GAP_MS;
  const repeats = cameBack ? (Number(last!.repeats) || 0) + 1 : 0;
  const gap = Math.min(MAX_RELOAD_GAP_MS, RELOAD_GAP_MS * 2 ** Math.max(0, repeats - 1));
  const wait = Math.max(0, (Number(last?.at) || 0) + gap - Date.now());
  if (wait > 0 && notice) showStaleNotice(notice);
  setTimeout(() => {
    // The fields as they are now: the user may have gone on typing while the page waited.
    const page = location.pathname + location.search;
    const changed = changedFields(document);
    const reloaded: Reloaded = { at: Date.now(), from, repeats };
    try {
      // Nothing changed and nothing to say: nothing to keep, and the new page loads no code to
      // put it back (`boot.ts` loads the action client only for a kept entry).
      if (notice || changed.length > 0) {
        const kept: Kept = { page, at: Date.now(), changed, notice };
        sessionStorage.setItem(KEPT, JSON.stringify(kept));
      }
      sessionStorage.setItem(RELOADED, JSON.stringify(reloaded));
    } catch { /* as above */ }
    location.reload();
  }, wait);
}

/** Puts back what `reloadKeepingInput` kept for this page, once the document is parsed. */
export function restoreKeptInput(): void {
  let kept: Kept | undefined;
  try {
    const text = sessionStorage.getItem(KEPT);
    if (text === null) return;
    sessionStorage.removeItem(KEPT);
    kept = JSON.parse(text);
  } catch {
    return;
  }
  if (!kept || kept.page !== location.pathname + location.search) return;
  if (!(Date.now() - kept.at < KEPT_MS)) return;
  const { changed, fields, notice } = kept;
  const restore = () => {
    if (Array.isArray(changed)) putBack(document, changed);
    else if (Array.isArray(fields)) putBack(document, fromValues(document, fields));
    if (notice && Object.hasOwn(SENTENCES, notice)) showStaleNotice(notice);
  };
  if (document.readyState === "loading") {
    addEventListener("DOMContentLoaded", restore, { once: true });
  } else restore();
}

/** The one sentence at the top of the page, unless one shows already (the server's, say). */
function showStaleNotice(kind: Notice): void {
  if (document.querySelector(`[${NOTICE_ATTRIBUTE}]`) || !document.body) return;
  const notice = document.createElement("p");
  notice.setAttribute("role", "status");
  notice.setAttribute(NOTICE_ATTRIBUTE, "");
  notice.textContent = SENTENCES[kind];
  document.body.prepend(notice);
}

function fieldsIn(root: ParentNode): Field[] {
  return [...root.querySelectorAll<Field>("input[name], textarea[name], select[name]")]
    .filter((field) =>
      isKeepable(field.name) && (!(field instanceof HTMLInputElement) || isKeptType(field.type)) &&
      !isUnkept(field)
    );
}

/** Whether `field` is never kept for its attributes (`autocomplete`, `data-app-keep`). */
function isUnkept(field: Element): boolean {
  return isSensitiveField(field.getAttribute("autocomplete"), field.getAttribute(KEEP_ATTRIBUTE));
}

/**
 * `form` (an action's argument) with an `UNKEPT_FIELD` for each field of the page never kept for
 * its attributes, or a password (whatever its name), that it holds: should the action be gone,
 * the server then leaves them out of the form-state cookie. A form the server rendered carries
 * them already; one an island rendered in the browser does not. A copy: the caller's form stays
 * as it was.
 */
export function withUnkeptMarks(form: FormData): FormData {
  if (typeof document === "undefined") return form; // the test kit, outside a browser
  const names = [
    ...document.querySelectorAll(
      `input[type=password i][name], [name][autocomplete], [name][${KEEP_ATTRIBUTE}]`,
    ),
  ].filter((field) => (field as HTMLInputElement).type === "password" || isUnkept(field))
    .map((field) => field.getAttribute("name")!)
    .filter((name) => form.has(name));
  if (names.length === 0) return form;
  const marked = new FormData();
  for (const [name, value] of form) marked.append(name, value);
  for (const name of new Set(names)) marked.append(UNKEPT_FIELD, name);
  return marked;
}

/**
 * Each field with the key that finds it again on the new page: a checkbox or radio by its name and
 * value, any other by its name and place among the others of that name (the n-th `item`).
 */
function keyed(root: ParentNode): [string, Field][] {
  const seen = new Map<string, number>();
  return fieldsIn(root).map((field) => {
    if (isCheckable(field)) return [`${field.name}\n=${field.value}`, field];
    const at = seen.get(field.name) ?? 0;
    seen.set(field.name, at + 1);
    return [`${field.name}\n#${at}`, field];
  });
}

/**
 * What the user changed, as it is now: emptied, unchecked and unselected too. Never a field they
 * left alone, so the new page keeps what its server filled in (`touched.ts`).
 */
function changedFields(root: ParentNode): Changed[] {
  const changed: Changed[] = [];
  for (const [key, field] of keyed(root)) {
    if (field.disabled || !wasTouched(field)) continue;
    if (changed.length >= MAX_KEPT_FIELDS) break;
    if (field instanceof HTMLSelectElement) {
      changed.push([key, [...field.selectedOptions].map((option) => option.value)]);
    } else if (isCheckable(field)) changed.push([key, field.checked]);
    else changed.push([key, field.value]);
  }
  return changed;
}

/**
 * What a page of the build before this format kept (every field's value by name, the n-th value
 * for the n-th field), as changes: the deploy that brings this format reloads such pages.
 */
function fromValues(root: ParentNode, fields: [string, string][]): Changed[] {
  const byName = keptByName(fields.filter(Array.isArray));
  const taken = new Map<string, number>();
  return keyed(root).flatMap(([key, field]): Changed[] => {
    const values = byName.get(field.name);
    if (!values) return [];
    if (field instanceof HTMLSelectElement) return [[key, values]];
    if (isCheckable(field)) return [[key, values.includes(field.value)]];
    const at = taken.get(field.name) ?? 0;
    taken.set(field.name, at + 1);
    return at < values.length ? [[key, values[at]]] : [];
  });
}

function putBack(root: ParentNode, changed: Changed[]): void {
  const states = new Map(changed.filter((entry) => Array.isArray(entry)));
  for (const [key, field] of keyed(root)) {
    const state = states.get(key);
    if (field instanceof HTMLSelectElement) {
      if (!Array.isArray(state)) continue;
      for (const option of field.options) option.selected = state.includes(option.value);
    } else if (isCheckable(field)) {
      if (typeof state !== "boolean") continue;
      setNative(field, "checked", state);
    } else {
      if (typeof state !== "string") continue;
      setNative(field, "value", state);
    }
    // A component that holds the field's value in its state hears of it as of a keystroke.
    field.dispatchEvent(new Event("input", { bubbles: true }));
    field.dispatchEvent(new Event("change", { bubbles: true }));
  }
}

function isCheckable(field: Field): field is HTMLInputElement {
  return field instanceof HTMLInputElement && (field.type === "checkbox" || field.type === "radio");
}

/**
 * Sets the property with the element's own setter: React watches the instance's, and would take
 * the event that follows for no change.
 */
function setNative(field: Field, property: "value" | "checked", value: string | boolean): void {
  const prototype = Object.getPrototypeOf(field);
  Object.getOwnPropertyDescriptor(prototype, property)?.set?.call(field, value);
}
