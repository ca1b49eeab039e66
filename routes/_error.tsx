import type { ErrorPageProps } from "shell";

/**
 * The page for an expected error (`throw httpError(403, "…")`) anywhere below `routes/`, unless a
 * folder has an `_error.tsx` of its own. Its message is the product's text, shown as it is.
 */
export default function ErrorPage({ status, message }: ErrorPageProps) {
  return (
    <>
      <title>{message}</title>
      <h1>{message}</h1>
      <p>
        Error {status}. <a href="/">Back to the start</a>
        {status === 403 && (
          <>
            {" "}or <a href="/login">log in with another account</a>
          </>
        )}
      </p>
    </>
  );
}
