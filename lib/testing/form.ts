/**
 * @module
 * A page's form as a browser without JavaScript submits it: the page's HTML parsed by happy-dom (a
 * browser's DOM, with scripts and subresources off), the form found by a selector or by the
 * action it posts to, and its entry list built by the DOM's own `FormData(form, submitter)` - the
 * hidden fields React and the framework render (`$ACTION_REF_...`, `$ACTION_KEY`, bound state)
 * included, unchecked boxes and other buttons left out - then the test's own values set on top.
 * Test-only: nothing here runs in an app.
 */
import {
  type Document,
  type Element,
  type HTMLButtonElement,
  type HTMLFormElement,
  Window,
} from "happy-dom";

/** Which form of a page: a CSS selector, or the server action (or URL) it posts to. */
export type FormChoice = string | { action: string };

/** A form ready to send: where, how, and the browser's entries with the test's values set. */
export interface FilledForm {
  /** Absolute URL the form posts (or navigates) to. */
  url: string;
  method: "GET" | "POST";
  /** `multipart/form-data` or `application/x-www-form-urlencoded`. */
  enctype: string;
  entries: FormData;
}

/**
 * A value for a field: a string, several (`name=a&name=b`), or a file.
 *
 * @example
 * ```ts
 * import type { FieldValue } from "shell/testing";
 * const fields: Record<string, FieldValue> = {
 *   title: "Hello",
 *   tags: ["a", "b"],
 *   photo: new File(["..."], "photo.png", { type: "image/png" }),
 * };
 * ```
 */
export type FieldValue = string | string[] | File;

/**
 * Finds the form `choice` on the page `html` (served at `pageUrl`), builds its entries as a browser
 * does when `submitter` (a selector within the form; the first submit button if not given) is
 * clicked, and sets `fields` on top.
 */
export async function fillForm(
  html: string,
  pageUrl: string,
  choice: FormChoice | undefined,
  fields: Record<string, FieldValue>,
  submitter?: string,
): Promise<FilledForm> {
  const window = new Window({
    url: pageUrl,
    settings: {
      disableJavaScriptEvaluation: true,
      disableJavaScriptFileLoading: true,
      disableCSSFileLoading: true,
      disableIframePageLoading: true,
      disableComputedStyleRendering: true,
    },
  });
  try {
    const document = new window.DOMParser().parseFromString(html, "text/html");
    const form = findForm(document, choice, pageUrl);
    const button = submitter
      ? form.querySelector(submitter)
      : form.querySelector("button:not([type]), button[type=submit], input[type=submit]");
    if (submitter && !button) throw new Error(`no ${submitter} in the form on ${pageUrl}`);
    const dom = new window.FormData(form, (button as HTMLButtonElement | null) ?? undefined);
    const entries = new FormData();
    for (const [name, value] of dom.entries()) {
      if (typeof value === "string") entries.append(name, value);
      else {
        const bytes = await value.arrayBuffer();
        entries.append(name, new File([bytes], value.name, { type: value.type }));
      }
    }
    // In the form's order, as a browser would have them had the test typed them in.
    for (const [name, value] of Object.entries(fields)) {
      const [first, ...more] = Array.isArray(value) ? value : [value];
      if (first === undefined) entries.delete(name);
      else entries.set(name, first);
      for (const one of more) entries.append(name, one);
    }
    // A submitter's own `formaction`, `formmethod` and `formenctype` win over the form's.
    const url = attribute(button, "formaction") ?? attribute(form, "action") ?? pageUrl;
    const method = attribute(button, "formmethod") ?? attribute(form, "method") ?? "GET";
    const enctype = attribute(button, "formenctype") ?? attribute(form, "enctype") ??
      "application/x-www-form-urlencoded";
    return {
      url: new URL(url, pageUrl).href,
      method: method.toUpperCase() === "POST" ? "POST" : "GET",
      enctype: enctype.toLowerCase(),
      entries,
    };
  } finally {
    await window.happyDOM.close();
  }
}

function findForm(
  document: Document,
  choice: FormChoice | undefined,
  pageUrl: string,
): HTMLFormElement {
  const forms = [...document.querySelectorAll("form")];
  const there = () =>
    forms.map((form) => {
      const id = attribute(form, "id");
      return id ? `#${id}` : `action=${attribute(form, "action") ?? ""}`;
    }).join(", ");
  let found;
  if (typeof choice === "string") found = document.querySelector(choice);
  else if (choice) {
    const target = new URL(choice.action, pageUrl).href;
    found = forms.find((form) => new URL(attribute(form, "action") ?? "", pageUrl).href === target);
  } else if (forms.length === 1) found = forms[0];
  else if (forms.length === 0) throw new Error(`no form on ${pageUrl}: the page has none`);
  else {
    throw new Error(
      `${pageUrl} has ${forms.length} forms: say which with \`form\` (a CSS selector, or the ` +
        `server action it posts to); its forms: ${there()}`,
    );
  }
  if (!found || found.tagName !== "FORM") {
    const which = typeof choice === "string" ? choice : `posting to ${choice?.action}`;
    throw new Error(`no form ${which} on ${pageUrl}; its forms: ${there() || "none"}`);
  }
  return found as HTMLFormElement;
}

/** An attribute, whatever the case it was rendered in (React writes `encType`, `formAction`). */
function attribute(element: Element | null | undefined, name: string): string | undefined {
  if (!element) return undefined;
  for (const attr of element.attributes) {
    if (attr.name.toLowerCase() === name) return attr.value ?? "";
  }
  return undefined;
}
