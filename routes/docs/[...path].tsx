import type { PageProps } from "shell";

export default function Docs({ params }: PageProps) {
  return (
    <>
      <title>Docs</title>
      <h1>Docs</h1>
      <p>
        A catch-all route matched <code>{params.path}</code>.
      </p>
    </>
  );
}
