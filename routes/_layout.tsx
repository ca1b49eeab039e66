import type { LayoutProps } from "shell";

export default function Layout({ Component }: LayoutProps) {
  return (
    <>
      <header>
        <nav aria-label="Site">
          <a href="/">Home</a> · <a href="/guestbook">Guestbook</a> · <a href="/account">Account</a>
          {" "}
          · <a href="/admin">Admin</a> · <a href="/login">Log in</a> · <a href="/signup">Sign up</a>
        </nav>
      </header>
      <main>
        <Component />
      </main>
    </>
  );
}
