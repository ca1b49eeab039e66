/**
 * @module
 * The client-side failure screen: when an island cannot load, hydrate or render, the whole page
 * gives way to the screen, so the user never acts on a half-working page.
 */
import { SCREEN_STYLE, screenBody } from "../errors/screen.ts";

let shown = false;

export function showClientFailure(error: unknown): void {
  console.error(error);
  if (shown) return;
  shown = true;
  const head = document.createElement("head");
  head.innerHTML = `<meta charset="utf-8"><meta name="viewport" ` +
    `content="width=device-width,initial-scale=1"><title>Application error</title>`;
  const style = document.createElement("style");
  style.textContent = SCREEN_STYLE;
  head.append(style);
  const body = document.createElement("body");
  body.innerHTML = screenBody({ host: location.hostname });
  document.documentElement.replaceChildren(head, body);
}
