/**
 * @module
 * `PayloadRejected`: what the reading of an action call throws for a body it refuses (over a cap
 * of `limits.ts`, or malformed). A client's mistake, answered 400, never a server failure.
 */
import type { ActionLimits } from "./limits.ts";

/** A request the decoder refused; `message` is short and safe to answer with. */
export class PayloadRejected extends Error {
  /** The cap it went over; none when the payload is malformed. */
  readonly cap?: keyof ActionLimits;

  constructor(message: string, cap?: keyof ActionLimits) {
    super(message);
    this.name = "PayloadRejected";
    this.cap = cap;
  }
}

/** A body that is not one `encodeCall` or a browser's form could have made. */
export function malformed(): PayloadRejected {
  return new PayloadRejected("the payload cannot be decoded");
}
