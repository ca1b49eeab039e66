/**
 * @module
 * The caps on what a client chooses in a server action call, in one place. `decode.ts` checks a
 * request against them before any work proportional to what it counts; beyond one, the call is
 * refused with 400 and the action never runs. Each number is far above what a real app sends and
 * far below what hurts the server: they bound the work one request can ask for, not what an app
 * may do. The request body as a whole is capped before this, by the endpoint's body limit.
 */

export interface ActionLimits {
  /**
   * Characters of devalue text in one field: `$ACTION_ARGS`, or a form's bound arguments. This
   * bounds the strings in it too, and the nodes devalue's JSON can hold.
   */
  payloadLength: number;
  /** Arguments of one call, those bound with `.bind()` included. */
  arguments: number;
  /**
   * Values in the arguments, counted as a walk of them as a tree would meet them: a value shared
   * by several places counts at each, so a FormData revived once per reference to its entries
   * counts them each time. Array lengths are capped by this too: every slot is a value, since
   * holes and sparse arrays are refused.
   */
  values: number;
  /** Levels of nesting: the arguments list is the first, a value inside it the second. */
  depth: number;
  /** Decimal digits of one BigInt (its sign aside). */
  bigintDigits: number;
  /**
   * Entries of one FormData argument, and of one URLSearchParams or URL argument's query (each
   * `&` counted as one: parsing makes an entry of each).
   */
  formDataEntries: number;
  /** Fields of the request body: each multipart part or `name=value` pair is one. */
  fields: number;
}

export const ACTION_LIMITS: Readonly<ActionLimits> = Object.freeze({
  // The default body limit. It may be raised for uploads, which travel as parts of their own, but
  // this text is parsed whole, in memory: up to some 22 bytes a character (`{},{},...`), 23 MB.
  payloadLength: 1024 * 1024,
  // Real actions take a handful; `useActionState` adds the previous state. This bounds the spread
  // of the arguments into the call.
  arguments: 64,
  // A 1 MiB payload of real records holds some tens of thousands; each value costs at most about
  // 100 bytes once revived, so 10 MB. A list sent by a real app is a page of rows, not this.
  values: 100_000,
  // Real data nests some ten levels; devalue revives recursively, so this also bounds its stack.
  depth: 64,
  // 2^64 has 20 digits and a 4096-bit number 1234; parsing a BigInt is superlinear in its digits
  // (under 1 ms at this cap, 140 ms at a million).
  bigintDigits: 10_000,
  // A form has tens of fields, a large admin form a few hundred.
  formDataEntries: 10_000,
  // The same for a form posted without JavaScript, plus one part per file of a call.
  fields: 10_000,
});
