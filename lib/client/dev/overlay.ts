/**
 * @module
 * Dev only: a build error shown over the page, which stays underneath with its state until the
 * fix is saved.
 */

const ID = "app-dev-overlay";

export function showOverlay(text: string): void {
  hideOverlay();
  const overlay = document.createElement("div");
  overlay.id = ID;
  overlay.setAttribute("role", "alert");
  overlay.style.cssText = "position:fixed;inset:0;z-index:2147483647;overflow:auto;margin:0;" +
    "padding:2rem;background:rgba(20,20,20,.94);color:#f3f3f3;" +
    "font:14px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace";
  const title = document.createElement("h1");
  title.style.cssText = "font:inherit;font-weight:600;margin:0 0 1rem";
  title.textContent = "Build failed";
  const details = document.createElement("pre");
  details.style.cssText = "white-space:pre-wrap;margin:0";
  details.textContent = text;
  const hint = document.createElement("p");
  hint.textContent = "Fix the error and save: the page keeps its state underneath.";
  overlay.append(title, details, hint);
  document.body.append(overlay);
}

export function hideOverlay(): void {
  document.getElementById(ID)?.remove();
}
