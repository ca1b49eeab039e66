import type { LayoutProps } from "../lib/mod.ts";

export default function Layout({ Component }: LayoutProps) {
  return (
    <>
      <header>
        <a href="/">Home</a>
      </header>
      <main>
        <Component />
      </main>
    </>
  );
}
