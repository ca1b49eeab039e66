/**
 * @module
 * The values of the product's settings given to `createApp` (`AppOptions.settings`: a test's own),
 * read by their declared schemas as the environment's text is at start, each problem a line of
 * the same `SettingsError`. The values are values, not text, yet a schema reads text: a value its
 * schema takes as it is is held as what the schema makes of it, as from the environment (`2` for
 * `"2"`), and one the schema makes of a text of it is held as it is (`2` of `"2"`, `true` of
 * `"on"`, an object of its JSON). The entry points' values, read by the same schemas from the
 * environment (`readVariables`), are not read again: a schema's output need not read as text.
 */
import { isDeepStrictEqual } from "node:util";
import { problemOf, resultOf, type SettingSchema, type StandardResult, wasRead } from "./read.ts";

/** The words a switch is written as, for a boolean given: `"on"` reads to `true` in one product. */
const SWITCHES = ["true", "false", "1", "0", "yes", "no", "on", "off"];

/**
 * `given` as the app holds them: each what its schema makes of it, or itself where its schema
 * makes it of a text. Adds to `problems` a line for each its schema would never make from a text.
 */
export function readGiven(
  schemas: Readonly<Record<string, SettingSchema>>,
  given: Readonly<Record<string, unknown>>,
  problems: string[],
): Record<string, unknown> {
  if (wasRead(given)) return { ...given };
  const values: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given)) {
    const schema = schemas[name];
    const asIs = validate(schema, value);
    if (asIs === undefined) {
      problems.push(`${name}: its schema is asynchronous; a setting's must check at once`);
      continue;
    }
    if (!asIs.issues?.length) {
      values[name] = asIs.value;
      continue;
    }
    const texts = textsOf(value);
    const read = texts.map((text) => validate(schema, text));
    const made = (result?: StandardResult) =>
      result !== undefined && !result.issues?.length && isDeepStrictEqual(result.value, value);
    if (read.some(made)) {
      values[name] = value;
      continue;
    }
    const issue = read.find((result) => result?.issues?.length)?.issues?.[0] ?? asIs.issues[0];
    const text = texts[0] ?? (value === undefined ? undefined : String(value));
    problems.push(problemOf(name, text, schema, issue));
  }
  return values;
}

/** The schema's result for `input`; `undefined` for an asynchronous schema (refused at start). */
function validate(schema: SettingSchema, input: unknown): StandardResult | undefined {
  const result = resultOf(schema, input);
  if (!(result instanceof Promise)) return result;
  result.catch(() => {});
}

/** The texts the environment could hold for `value`. */
function textsOf(value: unknown): string[] {
  if (typeof value === "string") return [];
  if (typeof value === "boolean") return [String(value), ...SWITCHES];
  if (Array.isArray(value)) return [value.join(","), value.join(", "), ...jsonOf(value)];
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? [] : [value.toISOString()];
  if (isPlainObject(value)) return jsonOf(value);
  return value === null || value === undefined ? [] : [String(value)];
}

/** `value` as JSON, for a schema parsing it: none for one JSON cannot write (a cycle, a bigint). */
function jsonOf(value: unknown): string[] {
  try {
    return [JSON.stringify(value)];
  } catch {
    return [];
  }
}

function isPlainObject(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
