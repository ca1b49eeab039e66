/**
 * @module
 * A collection's item ids: ULIDs (`npm:ulid`, the reference implementation) - 26 characters, made
 * without asking KV (so creating items never races for a counter), sortable by creation: a listing
 * in id order is in creation order. Within an isolate they are strictly increasing (the monotonic
 * factory); across instances they follow the clocks, so two items made in the same millisecond on
 * two instances may list in either order.
 */
import { monotonicFactory } from "ulid";

const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export const newId: () => string = monotonicFactory();

/** True for a well-formed id: anything else names no item, whatever a client sends. */
export function isId(id: unknown): id is string {
  return typeof id === "string" && ULID.test(id);
}
