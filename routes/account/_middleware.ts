/**
 * Only signed-in users reach `routes/account/`: an anonymous visitor goes to `/login` and comes
 * back after. Its pages read the user from `state.user`.
 */
import { requireUser } from "shell/auth";

export const handler = requireUser();
