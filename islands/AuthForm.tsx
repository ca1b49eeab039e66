import { useActionState } from "react";
import { actionStatus, recover } from "shell/runtime";
import { join, logIn } from "@/routes/_auth/actions.ts";
import type { AuthFormState } from "@/routes/_auth/types.ts";

/**
 * Told to wait (429: too many tries; 503: the server could not check the password in time - too
 * many at once, or too busy even for one), the form says so and keeps the email.
 */
const orWait = (action: typeof logIn) =>
  recover(action, (error, _previous: AuthFormState, form: FormData) => {
    const status = actionStatus(error);
    if (status !== 429 && status !== 503) return undefined;
    const wait = status === 429
      ? "Too many tries in a short time: please wait a few minutes, then try again."
      : "The server is busy right now: please try again in a moment.";
    return { wait, email: String(form.get("email") ?? "") };
  });

const ACTIONS = { signup: orWait(join), login: orWait(logIn) };

/**
 * The sign-up or log-in form: an email and a password, posted to a server action. With JavaScript
 * it runs in place and shows what was wrong beside each field; without, the browser posts it and
 * comes back to the page with the same errors. `next`: where to go after (a path of this app).
 */
export default function AuthForm({ mode, next }: { mode: "signup" | "login"; next: string }) {
  const [state, action, pending] = useActionState(ACTIONS[mode], {});
  const { errors = {} } = state;
  const submit = mode === "signup" ? "Sign up" : "Log in";
  return (
    <form action={action} className="card auth">
      <input type="hidden" name="next" value={next} />
      {errors.form && <p role="alert" className="field-error">{errors.form}</p>}
      <label>
        Email
        <input
          name="email"
          type="email"
          autoComplete="email"
          required
          defaultValue={state.email}
          aria-invalid={errors.email ? true : undefined}
          aria-describedby={errors.email ? "email-error" : undefined}
        />
      </label>
      {errors.email && <p id="email-error" className="field-error">{errors.email}</p>}
      <label>
        Password
        <input
          name="password"
          type="password"
          autoComplete={mode === "signup" ? "new-password" : "current-password"}
          required
          aria-invalid={errors.password ? true : undefined}
          aria-describedby={errors.password ? "password-error" : undefined}
        />
      </label>
      {errors.password && <p id="password-error" className="field-error">{errors.password}</p>}
      <p>
        <button type="submit" disabled={pending}>{pending ? "One moment…" : submit}</button>
        {state.wait && <span role="status">{state.wait}</span>}
      </p>
    </form>
  );
}
