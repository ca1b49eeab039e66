/**
 * @module
 * The values of the product's settings given to `createApp` (`AppOptions.settings`: a test's own),
 * checked by their declared schemas as the environment's text is at start, each problem a line of
 * the same `SettingsError`. The values are values, not text: a schema reads text, so a value is
 * taken when its schema takes it as it is (a URL's text) or reads a text of it to it (`2` from
 * `"2"`, `true` from `"on"`). The entry points' values, read by the same schemas from the
 * environment (`readVariables`), are not checked again: a schema's output need not read as text.
 */
import { isDeepStrictEqual } from "node:util";
import { problemOf, resultOf, type SettingSchema, type StandardResult, wasRead } from "./read.ts";

/** The words a switch is written as, for a boolean given: `"on"` reads to `true` in one product. */
const SWITCHES = ["true", "false", "1", "0", "yes", "no", "on", "off"];

/** Adds to `problems` a line for each of `given` its schema would never make from a text. */
export function checkGiven(
  schemas: Readonly<Record<string, SettingSchema>>,
  given: Readonly<Record<string, unknown>>,
  problems: string[],
): void {
  if (wasRead(given)) return;
  for (const [name, value] of Object.entries(given)) {
    const schema = schemas[name];
    const asIs = validate(schema, value);
    if (asIs === undefined) {
      problems.push(`${name}: its schema is asynchronous; a setting's must check at once`);
      continue;
    }
    if (!asIs.issues?.length) continue;
    const texts = textsOf(value);
    const read = texts.map((text) => validate(schema, text));
    const made = (result?: StandardResult) =>
      result !== undefined && !result.issues?.length && isDeepStrictEqual(result.value, value);
    if (read.some(made)) continue;
    const issue = read.find((result) => result?.issues?.length)?.issues?.[0] ?? asIs.issues[0];
    const text = texts[0] ?? (value === undefined ? undefined : String(value));
    problems.push(problemOf(name, text, schema, issue));
  }
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
  if (Array.isArray(value)) return [value.join(","), value.join(", ")];
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? [] : [value.toISOString()];
  return value === null || value === undefined ? [] : [String(value)];
}
