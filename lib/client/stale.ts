/**
 * @module
 * A page older than the server's build moving to the new version without losing what the user
 * typed. `reloadKeepingInput()` keeps the value of every named field of the page
 * (`shared/kept_input.ts`: never a password, a file, a hidden field or a name that looks like a
 * credential) in the tab's `sessionStorage` for a minute - none when every field is empty, none
 * emptied by the user, and there is nothing to say - and reloads; the new page's runtime
 * (`restoreKeptInput()`, from the boot runtime) puts them back into its fields of the same names -
 * the n-th field of a name gets its n-th value - and, when an action the user asked for did not
 * run, says why in one sentence, unless the server did already (it puts back what a form sent,
 * too: `actions/stale.ts`); when it broke on what the new server sent, another sentence, since
 * what the user did may have run. A page that reloaded so
 * and is out of date again at once (a rollout still under way) waits a little before the next
 * reload, the sentence on show, and longer each time the reload brought back the same old build:
 * never a loop. Part of the action client's bundle, which the boot
 * runtime loads only when a page must move or has just moved (`boot.ts`): no page pays for it
 * before; nothing runs as it loads.
 */
import {
  isKeepable,
  isKeptType,
  keptByName,
  type KeptInput,
  MAX_KEPT_FIELDS,
  NOTICE_ATTRIBUTE,
  RELOADED_NOTICE,
  STALE_NOTICE,
} from "../shared/kept_input.ts";
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

interface Kept {
  page: string;
  at: number;
  fields: KeptInput;
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
    const fields = fieldsOf(document);
    const reloaded: Reloaded = { at: Date.now(), from, repeats };
    try {
      // Nothing typed and nothing to say: nothing to keep, and the new page loads no code to
      // put it back (`boot.ts` loads the action client only for a kept entry). A field emptied
      // is something typed: the page it came with filled it (a profile's name, a search's `q`).
      if (notice || fields.some(([, value]) => value !== "") || emptiedAny(document)) {
        const kept: Kept = { page, at: Date.now(), fields, notice };
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
  if (!(Date.now() - kept.at < KEPT_MS) || !Array.isArray(kept.fields)) return;
  const { fields, notice } = kept;
  const restore = () => {
    putBack(document, fields);
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
      isKeepable(field.name) && (!(field instanceof HTMLInputElement) || isKeptType(field.type))
    );
}

/** Every keepable field's value, in the order of the page. */
function fieldsOf(root: ParentNode): KeptInput {
  const kept: KeptInput = [];
  for (const field of fieldsIn(root)) {
    if (field.disabled) continue;
    if (field instanceof HTMLSelectElement) {
      for (const option of field.selectedOptions) kept.push([field.name, option.value]);
    } else if (isCheckable(field)) {
      if (field.checked) kept.push([field.name, field.value]);
    } else kept.push([field.name, field.value]);
  }
  return kept.slice(0, MAX_KEPT_FIELDS);
}

/**
 * Whether the user emptied a field the page came with filled (or chose a select's empty option
 * over the one it came with). Only emptied ones: React keeps a controlled field's default as its
 * value, so a default tells nothing about a field still filled.
 */
function emptiedAny(root: ParentNode): boolean {
  return fieldsIn(root).some((field) => {
    if (field.disabled || isCheckable(field) || field.value !== "") return false;
    if (!(field instanceof HTMLSelectElement)) return field.defaultValue !== "";
    const chosen = [...field.options].find((option) => option.defaultSelected);
    return chosen !== undefined && chosen.value !== "";
  });
}

function putBack(root: ParentNode, kept: KeptInput): void {
  const byName = keptByName(kept);
  const taken = new Map<string, number>();
  for (const field of fieldsIn(root)) {
    const values = byName.get(field.name);
    if (!values) continue;
    if (field instanceof HTMLSelectElement) {
      for (const option of field.options) option.selected = values.includes(option.value);
    } else if (isCheckable(field)) {
      setNative(field, "checked", values.includes(field.value));
    } else {
      const at = taken.get(field.name) ?? 0;
      taken.set(field.name, at + 1);
      if (at >= values.length) continue;
      setNative(field, "value", values[at]);
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
