import { useActionState } from "react";
import { sign } from "../routes/_guestbook/actions.ts";
import type { Entry } from "../routes/_guestbook/entries.ts";

/**
 * The guestbook form: a server action with `useActionState`. With JavaScript, signing updates the
 * list in place; without it, the browser posts the form and comes back to the page, errors and all.
 */
export default function Guestbook({ entries }: { entries: Entry[] }) {
  const [state, signAction, pending] = useActionState(sign, { entries });
  const { errors = {}, values } = state;
  return (
    <>
      <form action={signAction} className="card guestbook">
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
          {state.signed && <span role="status">Thank you, {state.signed}!</span>}
        </p>
      </form>
      <ol className="entries" aria-label="Latest entries">
        {state.entries.map((entry) => (
          <li key={`${entry.at.getTime()} ${entry.name}`}>
            <q>{entry.message}</q> — {entry.name},{" "}
            <time dateTime={entry.at.toISOString()}>{entry.at.toISOString().slice(0, 10)}</time>
          </li>
        ))}
      </ol>
    </>
  );
}
