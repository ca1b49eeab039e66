import { EXAMPLES } from "./_examples.ts";

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
