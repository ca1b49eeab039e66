import { useActionState, useState } from "react";
import { actionStatus, recover, useFeed } from "shell/runtime";
import { sign } from "@/routes/_guestbook/actions.ts";
import type { Entry, GuestbookState } from "@/routes/_guestbook/types.ts";

/** Over the signing limit (429), the form says so and keeps what was typed. */
const signOrWait = recover(sign, (error, _previous: GuestbookState, form: FormData) => {
  if (actionStatus(error) !== 429) return undefined;
  return {
    wait: "That was a lot of signing in a short time: please wait a minute, then try again.",
    values: { name: String(form.get("name") ?? ""), message: String(form.get("message") ?? "") },
  };
});

/**
 * The guestbook form: a server action with `useActionState`, and the latest entries, kept up to
 * date by the server's event stream. With JavaScript, signing updates the list in place and
 * entries signed elsewhere appear as they come; without it, the browser posts the form and comes
 * back to the page, errors and all, and a reload shows new entries. A signed-in user (`signingAs`)
 * signs with their own name: the form asks only for the message. It lists the newest `shown`
 * entries (the `GUESTBOOK_SHOWN` setting).
 */
export default function Guestbook(
  { entries, shown: count, signingAs }: { entries: Entry[]; shown: number; signingAs?: string },
) {
  const [state, signAction, pending] = useActionState(signOrWait, {});
  const live = useLiveEntries(entries[0]?.id ?? 0, count);
  const { errors = {}, values } = state;
  const shown = newestFirst([...live, ...(state.signed ? [state.signed] : []), ...entries], count);
  return (
    <>
      <form action={signAction} className="card guestbook">
        {signingAs ? <p>Signing as {signingAs}.</p> : (
          <label>
            Name
            <input
              name="name"
              autoComplete="name"
              defaultValue={values?.name}
              aria-invalid={errors.name ? true : undefined}
              aria-describedby={errors.name ? "name-error" : undefined}
            />
          </label>
        )}
        {errors.name && <p id="name-error" className="field-error">{errors.name[0]}</p>}
        <label>
          Message
          <textarea
            name="message"
            rows={2}
            defaultValue={values?.message}
            aria-invalid={errors.message ? true : undefined}
            aria-describedby={errors.message ? "message-error" : undefined}
          />
        </label>
        {errors.message && <p id="message-error" className="field-error">{errors.message[0]}</p>}
        <p>
          <button type="submit" disabled={pending}>{pending ? "Signing…" : "Sign"}</button>
          {state.signed && <span role="status">Thank you, {state.signed.name}!</span>}
          {state.wait && <span role="status">{state.wait}</span>}
        </p>
      </form>
      <ol className="entries" aria-label="Latest entries">
        {shown.map((entry) => (
          <li key={entry.id}>
            <q>{entry.message}</q> — {entry.name},{" "}
            <time dateTime={entry.at.toISOString()}>{entry.at.toISOString().slice(0, 10)}</time>
          </li>
        ))}
      </ol>
      {shown.length === 0 && <p>No entries yet: be the first to sign.</p>}
    </>
  );
}

/**
 * Entries signed after `since`, as the server's event stream sends them, from hydration on.
 * `useFeed` keeps the stream: after a drop it resumes from the last entry it got, backing off when
 * the server refuses, and a hidden page holds no stream (shown again, it asks for what it missed).
 */
function useLiveEntries(since: number, count: number): Entry[] {
  const [live, setLive] = useState<Entry[]>([]);
  useFeed("/guestbook/events", {
    since,
    on: {
      entry(event) {
        const entry: Entry = JSON.parse(event.data);
        entry.at = new Date(entry.at);
        setLive((shown) => newestFirst([entry, ...shown], count));
      },
    },
  });
  return live;
}

/** The newest `count` of `entries`, each once (by id), newest first. */
function newestFirst(entries: Entry[], count: number): Entry[] {
  const byId = new Map(entries.map((entry) => [entry.id, entry]));
  return [...byId.values()].sort((a, b) => b.id - a.id).slice(0, count);
}
