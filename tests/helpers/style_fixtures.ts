/**
 * @module
 * An app of the tests' own for stylesheets, added to a copy of the project: its own `_app` with a
 * global stylesheet, a folder `styled/` whose layout imports two (one through the `@/` alias, one
 * that an island imports too), a page that imports a global stylesheet (which imports itself), a
 * CSS module and a Tailwind stylesheet, and renders an island with a CSS module twice; a page of the
 * same folder that imports the island but does not render it; and a page outside the folder that
 * imports nothing but uses the same class names. Three files define `.card`: the page's global
 * stylesheet, its CSS module and the island's. Every stylesheet sets `order` on `.cascade` to its
 * place in the order it must apply in, and carries a marker (`--sheet-…`) naming it.
 */

/** The stylesheets, in the order a page of `styled/` that renders the island applies them. */
export const CASCADE = ["app", "shared", "layout", "page", "page-module", "tailwind", "island"];

const marker = (name: string, order: number) =>
  `:root { --sheet-${name}: 1; }\n.cascade { order: ${order}; }\n`;

const globalMarker = (name: string, order: number) =>
  `:root { --sheet-${name}: 1; }\n:global(.cascade) { order: ${order}; }\n`;

export const STYLE_FILES: Record<string, string> = {
  "routes/_app.tsx": `import type { AppProps } from "shell";
import "./fixture-app.css";

export default function App({ Component }: AppProps) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
      </head>
      <body>
        <Component />
      </body>
    </html>
  );
}
`,
  "routes/fixture-app.css": `${marker("app", 1)}body { margin: 0; }\n`,
  "components/shared.css": `${marker("shared", 2)}.shared-probe { letter-spacing: 3px; }\n`,
  "routes/styled/_layout.tsx": `import type { LayoutProps } from "shell";
import "@/components/shared.css";
import "./layout.css";

export default function Layout({ Component }: LayoutProps) {
  return (
    <main className="layout-probe">
      <Component />
    </main>
  );
}
`,
  "routes/styled/layout.css": `${marker("layout", 3)}.layout-probe { padding-top: 11px; }\n`,
  "routes/styled/page.css": `@import "./page.css";\n${marker("page", 4)}` +
    `.global-probe { color: rgb(1, 2, 3); }\n.card { outline-style: dotted; }\n`,
  "routes/styled/page.module.css": `${globalMarker("page-module", 5)}` +
    `.probe { color: rgb(4, 5, 6); }\n.card { outline-color: rgb(9, 9, 9); }\n`,
  "routes/styled/tw.css": `@import "tailwindcss";\n${marker("tailwind", 6)}`,
  "islands/StyledIsland.module.css": `${globalMarker("island", 7)}` +
    `.box { color: rgb(2, 4, 6); }\n.card { outline-color: rgb(8, 8, 8); }\n`,
  "islands/StyledIsland.tsx": `import { useState } from "react";
import "@/components/shared.css";
import styles from "./StyledIsland.module.css";

export default function StyledIsland({ id }: { id: string }) {
  const [clicks, setClicks] = useState(0);
  return (
    <div id={id} className={styles.box}>
      <button type="button" onClick={() => setClicks((n) => n + 1)}>clicked {clicks}</button>
      <span className={\`\${styles.card} text-[rgb(3,2,1)]\`}>island</span>
    </div>
  );
}
`,
  "routes/styled/index.tsx": `import StyledIsland from "@/islands/StyledIsland.tsx";
import "./page.css";
import styles from "./page.module.css";
import "./tw.css";

export default function StyledPage() {
  return (
    <>
      <title>Styled</title>
      <p id="global" className="global-probe card">global</p>
      <p id="module" className={\`\${styles.probe} \${styles.card}\`}>module</p>
      <p id="tailwind" className="text-[rgb(7,8,9)] tracking-[5px]">tailwind</p>
      <p id="cascade" className="cascade">cascade</p>
      <StyledIsland id="first" />
      <StyledIsland id="second" />
    </>
  );
}
`,
  "routes/styled/other.tsx": `import StyledIsland from "@/islands/StyledIsland.tsx";

/** Imports the island without rendering it: its stylesheets are not linked. */
export default function Other() {
  return <p id="other">{StyledIsland.name}</p>;
}
`,
  "routes/plain.tsx": `/** Imports no stylesheet, uses the same class names. */
export default function Plain() {
  return (
    <>
      <p id="global" className="global-probe card">global</p>
      <p id="tailwind" className="text-[rgb(7,8,9)] tracking-[5px]">tailwind</p>
      <p id="cascade" className="cascade">cascade</p>
    </>
  );
}
`,
};
