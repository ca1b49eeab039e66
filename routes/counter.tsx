import Counter from "@/islands/Counter.tsx";
import type { PageProps } from "shell";
import { Contained } from "shell/runtime";

/** Should the counter fail in the browser, only it gives way to the fallback, not the page. */
const COUNTER_FAILED = (
  <p className="card" role="status">The counter could not start. Reload the page to try again.</p>
);

export default function CounterPage({ url }: PageProps) {
  return (
    <>
      <title>An island</title>
      <h1>An island</h1>
      <Contained fallback={COUNTER_FAILED}>
        <Counter
          start={3}
          since={new Date("2026-01-01T00:00:00Z")}
          tags={new Set(["react", "deno"])}
          scores={new Map([["ada", 10n ** 20n]])}
          home={new URL("/", url)}
        >
          <p>These words were rendered on the server and passed in as children.</p>
        </Counter>
      </Contained>
    </>
  );
}
