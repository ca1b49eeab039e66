const EXAMPLES = [
  ["/counter", "An island", "a stateful component hydrated in the browser, with rich props"],
  ["/streaming", "Streaming", "a Suspense section that streams in after the page"],
  ["/list", "A long list", "a hundred server-rendered rows and no JavaScript"],
  ["/blog/hello-world", "A dynamic route", "blog/[slug].tsx; unknown slugs answer 404"],
  ["/docs/getting/started", "A catch-all route", "docs/[...path].tsx"],
  ["/about", "A route group", "(info)/about.tsx: the folder stays out of the URL"],
  ["/api/time", "An API route", "a handler and no page: JSON"],
  ["/guestbook", "Server actions", "a form that calls the server, with or without JavaScript"],
  ["/board", "Live data", "a task board in a KV collection, updated live on every open page"],
  ["/admin", "Middleware", "hono/basic-auth guards a folder's pages and actions (admin / admin)"],
] as const;

export default function Home() {
  return (
    <>
      <title>Examples</title>
      <h1>Examples</h1>
      <p>Each page shows one capability of the application shell.</p>
      <ul>
        {EXAMPLES.map(([href, name, what]) => (
          <li key={href}>
            <a href={href}>{name}</a> — {what}
          </li>
        ))}
      </ul>
    </>
  );
}
