/** The numbers 1 to 100, worked out once at start-up: a page of plain HTML that ships no script. */
const NUMBERS = Array.from({ length: 100 }, (_, i) => i + 1).map((n) => ({
  n,
  square: n * n,
  binary: n.toString(2),
  prime: n > 1 && Array.from({ length: n - 2 }, (_, d) => d + 2).every((d) => n % d !== 0),
}));

export default function List() {
  return (
    <>
      <title>A long list</title>
      <h1>A long list</h1>
      <p>A hundred rows rendered on the server; the browser gets HTML and CSS, no JavaScript.</p>
      <ul>
        {NUMBERS.map(({ n, square, binary, prime }) => (
          <li key={n}>
            <strong>{n}</strong> — squared {square}, in binary <code>{binary}</code>
            {prime && " (prime)"}
          </li>
        ))}
      </ul>
    </>
  );
}
