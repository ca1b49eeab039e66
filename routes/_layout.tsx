import type { LayoutProps } from "shell";

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
