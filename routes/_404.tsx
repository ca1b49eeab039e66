import type { PageProps } from "shell";

export default function NotFound({ url }: PageProps) {
  return (
    <>
      <title>Page not found</title>
      <h1>Page not found</h1>
      <p>
        Nothing lives at <code>{url.pathname}</code>. <a href="/">Back to the start</a>
      </p>
    </>
  );
}
