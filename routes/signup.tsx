import AuthForm from "@/islands/AuthForm.tsx";
import { safeNext } from "shell/auth";
import { define } from "./_define.ts";

const route = define.route("signup.tsx");

export const handler = route.handlers<{ next: string }>({
  GET(_req, ctx) {
    return ctx.render({ next: safeNext(ctx.url.searchParams.get("next"), "/account") });
  },
});

export default route.page<typeof handler>(({ data }) => (
  <>
    <title>Sign up</title>
    <h1>Sign up</h1>
    <p>An email address and a password of 8 characters or more are all it takes.</p>
    <AuthForm mode="signup" next={data.next} />
    <p>
      Have an account? <a href={`/login?next=${encodeURIComponent(data.next)}`}>Log in</a>
    </p>
  </>
));
