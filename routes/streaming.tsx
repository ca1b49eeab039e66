import { Suspense, use } from "react";

function slowly<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms));
}

function Forecast({ forecast }: { forecast: Promise<string> }) {
  return <p>{use(forecast)}</p>;
}

export default function Streaming() {
  // Created per render: the shell goes out at once and the forecast follows when ready.
  const forecast = slowly(300, "Sunny, with a chance of hydration.");
  return (
    <>
      <title>Streaming</title>
      <h1>Streaming</h1>
      <p>The page arrived before the forecast below.</p>
      <Suspense fallback={<p aria-busy="true">Loading the forecast…</p>}>
        <Forecast forecast={forecast} />
      </Suspense>
    </>
  );
}
