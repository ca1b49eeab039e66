import AuthForm from "@/islands/AuthForm.tsx";
import { redirect } from "shell";
import { currentUser, safeNext } from "shell/auth";
import { define } from "./_define.ts";

const route = define.route("login.tsx");

export const handler = route.handlers<{ next: string }>({
  async GET(_req, ctx) {
    const next = safeNext(ctx.url.searchParams.get("next"), "/account");
    // Signed in already: on to where they were going. (One KV read, only with the cookie.)
    if (await currentUser(ctx)) redirect(next);
    return ctx.render({ next });
  },
});

export default route.page<typeof handler>(({ data }) => (
  <>
    <title>Log in</title>
    <h1>Log in</h1>
    <AuthForm mode="login" next={data.next} />
    <p>
      New here? <a href={`/signup?next=${encodeURIComponent(data.next)}`}>Sign up</a>
    </p>
  </>
));
