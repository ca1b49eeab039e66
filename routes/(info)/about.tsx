export default function About() {
  return (
    <>
      <title>About</title>
      <h1>About</h1>
      <p>
        This page lives in{" "}
        <code>routes/(info)/about.tsx</code>: a folder in parentheses groups routes without
        appearing in the URL.
      </p>
    </>
  );
}
