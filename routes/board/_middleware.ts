/**
 * Only signed-in users reach `routes/board/` — the board, its confirmation page, its event stream
 * and its server actions alike: an anonymous visitor goes to `/login` and comes back after; the
 * event stream and an island's action call get 401.
 */
import { requireUser } from "shell/auth";

export const handler = requireUser();
