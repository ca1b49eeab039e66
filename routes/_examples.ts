/**
 * @module
 * The example app's pages, as its home page lists them: each shows one capability of the shell.
 * Every page listed here belongs to the example (`tests/example/files.json`).
 */
export const EXAMPLES = [
  ["/counter", "An island", "a stateful component hydrated in the browser, with rich props"],
  ["/streaming", "Streaming", "a Suspense section that streams in after the page"],
  ["/list", "A long list", "a hundred server-rendered rows and no JavaScript"],
  ["/blog/hello-world", "A dynamic route", "blog/[slug].tsx; unknown slugs answer 404"],
  ["/docs/getting/started", "A catch-all route", "docs/[...path].tsx"],
  ["/about", "A route group", "(info)/about.tsx: the folder stays out of the URL"],
  ["/api/time", "An API route", "a handler and no page: JSON"],
  ["/guestbook", "Server actions", "a form that calls the server, with or without JavaScript"],
  [
    "/signup",
    "Users",
    "sign up, log in and out with an email and a password, with or without JavaScript",
  ],
  ["/account", "A signed-in page", "requireUser() guards a folder; the page reads state.user"],
  ["/admin", "Roles", 'requireRole("admin") guards a folder\'s pages and actions'],
] as const;
