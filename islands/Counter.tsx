import { type ReactNode, useState } from "react";
import styles from "./Counter.module.css";

export interface CounterProps {
  start: number;
  since: Date;
  tags: Set<string>;
  scores: Map<string, bigint>;
  home: URL;
  children?: ReactNode;
}

/** A stateful island: the props arrive in the browser with their types intact. */
export default function Counter({ start, since, tags, scores, home, children }: CounterProps) {
  const [count, setCount] = useState(start);
  return (
    <section className={styles.counter}>
      {children}
      <p>
        <button type="button" onClick={() => setCount((n) => n - 1)} aria-label="Decrement">
          −
        </button>
        <output aria-live="polite">{count}</output>
        <button type="button" onClick={() => setCount((n) => n + 1)} aria-label="Increment">
          +
        </button>
      </p>
      <dl>
        <dt>since</dt>
        <dd>{since.toISOString()}</dd>
        <dt>tags</dt>
        <dd>{[...tags].join(", ")}</dd>
        <dt>scores</dt>
        <dd>{[...scores].map(([k, v]) => `${k}: ${v}`).join(", ")}</dd>
        <dt>home</dt>
        <dd>{home.hostname}</dd>
      </dl>
    </section>
  );
}
