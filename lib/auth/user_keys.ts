/**
 * @module
 * Where users live in KV: the record by id, and the id by (normalised) email. Its own module
 * because sessions read the user's record too - a new session takes its roles from the record as
 * it commits, checked in the same commit (sessions.ts) - and users.ts imports sessions.ts.
 */

export const USERS = ["auth", "users"] as const;
export const EMAILS = ["auth", "emails"] as const;
