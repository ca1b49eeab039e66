import Guestbook from "../islands/Guestbook.tsx";
import { latestEntries } from "./_guestbook/entries.ts";

export default function GuestbookPage() {
  return (
    <>
      <title>Server actions</title>
      <h1>A guestbook</h1>
      <p>
        The form calls a server action that checks the entry with a schema. Try it with JavaScript
        turned off: the browser posts the form and comes back here, errors included.
      </p>
      <Guestbook entries={latestEntries()} />
    </>
  );
}
