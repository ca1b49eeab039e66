/**
 * @module
 * valibot schemas for the framework's settings (`lib/cli/settings.ts`): text from an environment
 * variable in, a typed value out, each failure saying what was expected.
 */
import * as v from "valibot";

/**
 * A whole number from `min` to `max` in decimal digits (never `5e3`, `-1`, `1MB`); `what` it
 * counts.
 */
export const wholeNumber = (
  min: number,
  max: number,
  what: string,
): v.GenericSchema<string, number> =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, `expected ${what}`),
    v.transform(Number),
    v.number(),
    v.minValue(min, `expected ${what}, at least ${min}`),
    v.maxValue(max, `expected ${what}, at most ${max}`),
  );

/** A switch: `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off` (any case). */
export const flag: v.GenericSchema<string, boolean> = v.pipe(
  v.string(),
  v.toLowerCase(),
  v.picklist(["1", "0", "true", "false", "yes", "no", "on", "off"], "expected 1 or 0"),
  v.transform((value) => ["1", "true", "yes", "on"].includes(value)),
);

/** A comma-separated list, each entry trimmed and checked by `item`; at least one. */
export const list = <T>(item: v.GenericSchema<string, T>): v.GenericSchema<string, T[]> =>
  v.pipe(
    v.string(),
    v.transform((value) => value.split(",").map((part) => part.trim()).filter(Boolean)),
    v.array(item),
    v.minLength(1, "expected at least one, comma-separated"),
  );

/** An origin such as `https://example.com`: scheme, host and port only. */
export const origin: v.GenericSchema<string, string> = v.pipe(
  v.string(),
  v.check(
    (value) => URL.parse(value)?.origin === value && /^https?:/.test(value),
    "expected origins such as https://example.com (scheme, host and port only)",
  ),
);

/** A `Host` header's value: a host name or address, with a port or not. */
export const host: v.GenericSchema<string, string> = v.pipe(
  v.string(),
  v.check((value) => URL.parse(`http://${value}/`)?.host === value.toLowerCase(), "expected hosts"),
);
