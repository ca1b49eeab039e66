/**
 * @module
 * A once-per-submission key for a form the browser posts itself to a server action, given at
 * submit when the form has none: a page served from the shared page cache is stored without its
 * forms' keys (one render's key would be every visitor's, `cache/entry.ts`), so a form outside any
 * island there posted without one and was not deduplicated. The key is made at the first submit and
 * stays in the form: a second click while the first post is on its way, or a re-post after Back,
 * sends the same one (one effect, `actions/once.ts`); a form changed meanwhile is another
 * submission by its content. Forms in an island are left alone: React posts them through the stub,
 * which keys each call itself. Only on pages with islands (this runtime): a page without one ships
 * no JavaScript of ours, and its forms go unkeyed, as with JavaScript off (docs/actions.md).
 */
import { ACTION_PATH, ONCE_FIELD } from "../shared/action_wire.ts";

/** Keys the forms of this page as they are submitted (a listener on the document). */
export function keySubmissions(): void {
  // Bubbling, so a submit a script cancelled (React's own, in an island; a product's check) is
  // left alone; the browser posts the form after this listener ran.
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (event.defaultPrevented || !(form instanceof HTMLFormElement)) return;
    if (form.elements.namedItem(ONCE_FIELD) || !crypto.randomUUID) return;
    const submitter = (event as SubmitEvent).submitter;
    const method = submitter?.getAttribute("formmethod") ?? form.method;
    const action = urlOf(submitter?.getAttribute("formaction") ?? form.action);
    if (method.toLowerCase() !== "post" || action?.origin !== location.origin) return;
    if (!action.pathname.startsWith(`${ACTION_PATH}/`)) return;
    const key = document.createElement("input");
    key.type = "hidden";
    key.name = ONCE_FIELD;
    key.value = crypto.randomUUID();
    form.append(key);
  });
}

/**
 * The URL a form posts to, if it is one (`URL.parse` is too new for some browsers we serve):
 * relative to the document's base URL, as the browser resolves it (a page's `<base href>`).
 */
function urlOf(href: string): URL | undefined {
  try {
    return new URL(href, document.baseURI);
  } catch {
    return undefined;
  }
}
