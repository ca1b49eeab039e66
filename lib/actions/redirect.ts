/**
 * @module
 * `return redirect("/thanks")` from a server action sends the browser there instead of back to
 * the page the form was on, with JavaScript on or off.
 */

export function redirect(url: string | URL): Response {
  return new Response(null, { status: 303, headers: { Location: String(url) } });
}
