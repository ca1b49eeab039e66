import "./about.css";

/** Styled with Tailwind's utility classes: `about.css` imports Tailwind. */
export default function About() {
  return (
    <>
      <title>About</title>
      <h1 className="text-3xl font-bold tracking-tight">About</h1>
      <p className="mt-4 rounded-lg bg-sky-50 p-4 text-sky-950 dark:bg-sky-950 dark:text-sky-50">
        This page lives in{" "}
        <code>routes/(info)/about.tsx</code>: a folder in parentheses groups routes without
        appearing in the URL.
      </p>
    </>
  );
}
