/**
 * @module
 * Reads settings from environment variables by their schemas - the framework's and the product's,
 * with the same rules - gathering every problem rather than stopping at the first, so one start-up
 * message names them all. An empty variable counts as unset. A secret's value never appears in a
 * problem: it names the variable only.
 */
import * as v from "valibot";

/** Reads one environment variable: `Deno.env.get`, or a test's record. */
export type Env = (name: string) => string | undefined;

/**
 * What one setting's variable becomes: a schema taking its text, or `undefined` when it is unset
 * or empty. A schema that does not take `undefined` (no `v.optional`) makes the setting required.
 */
export type SettingSchema =
  | v.GenericSchema<string, unknown>
  | v.GenericSchema<string | undefined, unknown>;

/**
 * Settings that make no sense, each named with what it should be: thrown before anything
 * listens. `problems` holds one line per variable.
 *
 * @example
 * ```ts
 * import { SettingsError } from "shell/server";
 *
 * const error = new SettingsError(["PAGE_SIZE=lots: expected a number of rows"]);
 * console.error(error.message); // Invalid settings:\n  PAGE_SIZE=lots: expected a number of rows
 * ```
 * @see docs/settings.md
 */
export class SettingsError extends Error {
  /** Each problem, one line each. */
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid settings:\n${problems.map((problem) => `  ${problem}`).join("\n")}`);
    this.name = "SettingsError";
    this.problems = problems;
  }
}

const secrets = new WeakSet<object>();

/**
 * Marks a setting as a secret (an API key, a password, a token): a value that makes no sense is
 * reported by the variable's name alone, never with the value or any part of it.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { defineSettings, secret } from "shell";
 *
 * export default defineSettings({
 *   PAYMENTS_API_KEY: secret(v.pipe(v.string(), v.regex(/^sk_[A-Za-z0-9]{24,}$/, "expected sk_..."))),
 * });
 * ```
 * @see docs/settings.md - Secrets
 */
export function secret<T extends SettingSchema>(schema: T): T {
  secrets.add(schema);
  return schema;
}

/** Whether `schema` is a secret, or wraps one (`v.optional(secret(...))`). */
function isSecret(schema: object): boolean {
  if (secrets.has(schema)) return true;
  const wrapped = (schema as { wrapped?: unknown }).wrapped;
  return typeof wrapped === "object" && wrapped !== null && isSecret(wrapped);
}

/**
 * Each variable of `schemas` read from `env` and parsed by its schema: the values by name (a
 * setting unset and not required is there, as what its schema made of `undefined`). Each variable
 * that makes no sense adds a line to `problems`.
 */
export function readVariables(
  schemas: Readonly<Record<string, SettingSchema>>,
  env: Env,
  problems: string[],
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    const text = env(name) || undefined;
    const result = v.safeParse(schema, text);
    if (result.success) values[name] = result.output;
    else problems.push(problemOf(name, text, schema, result.issues[0]));
  }
  return values;
}

function problemOf(
  name: string,
  text: string | undefined,
  schema: SettingSchema,
  issue: v.BaseIssue<unknown>,
): string {
  if (text === undefined) return `${name}: required, and not set`;
  if (!isSecret(schema)) return `${name}=${text}: ${issue.message}`;
  // valibot's own messages quote what they received: the value, or a part of it after a
  // transform (`v.trim()`, `v.startsWith()`). Such a message gives way to what was expected.
  const seen = [text, issue.received, typeof issue.input === "string" ? issue.input : ""]
    .filter((part) => part.length > 0 && part !== '""');
  const leaks = seen.some((part) => issue.message.includes(part));
  const message = !leaks
    ? issue.message
    : issue.expected
    ? `expected ${issue.expected}`
    : "invalid";
  return `${name} (a secret, its value not shown): ${message}`;
}
