/**
 * @module
 * A product's own settings: declared once in `routes/_settings.ts` with `defineSettings` (a schema
 * per environment variable, as the framework declares its own), read and validated with the
 * framework's at start-up (`lib/cli/settings.ts`), held by each app (`AppOptions.settings`), and
 * read - typed - by whatever code answers a request: `settings(ctx).NAME`, by a background job:
 * `settings(job).NAME`, and by a page's server components with `useSettings(settings)` (`use.ts`).
 */
import type { JobContext } from "../kv/jobs/define.ts";
import { type AnyContext, scopeOf } from "../server/scope.ts";
import { readGiven } from "./given.ts";
import { isSecret, readVariables, type SettingSchema, SettingsError } from "./read.ts";

/**
 * The settings' values, typed by their schemas' outputs.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import type { SettingValues } from "shell";
 *
 * const schemas = { PAGE_SIZE: v.optional(v.pipe(v.string(), v.transform(Number)), "20") };
 * const values: SettingValues<typeof schemas> = { PAGE_SIZE: 20 };
 * ```
 * @see docs/settings.md - Your product's settings
 */
export type SettingValues<S extends Readonly<Record<string, SettingSchema>>> = {
  readonly [K in keyof S]: NonNullable<S[K]["~standard"]["types"]>["output"];
};

/**
 * A product's settings, as `defineSettings` declares them: call it with a request's context (or a
 * job's, its `run`'s second argument) for the values of the app answering it.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { type AnyContext, defineSettings, type SettingsDeclaration } from "shell";
 *
 * const schemas = { GREETING: v.optional(v.string(), "Hello") };
 * const settings: SettingsDeclaration<typeof schemas> = defineSettings(schemas);
 * export const greeting = (ctx: AnyContext): string => settings(ctx).GREETING;
 * ```
 * @see docs/settings.md - Your product's settings
 */
export interface SettingsDeclaration<
  S extends Readonly<Record<string, SettingSchema>> = Readonly<Record<string, SettingSchema>>,
> {
  /** The values of the app answering the request `from` belongs to, or running the job. */
  (from: AnyContext | JobContext): SettingValues<S>;
  /** Each setting's schema, by its environment variable's name. */
  readonly schemas: S;
}

const NAME = /^[A-Z][A-Z0-9_]*$/;

/**
 * Declares the product's settings, each an environment variable read by its schema (text in, a
 * typed value out - valibot's, or any synchronous Standard Schema; `v.optional(schema, "default")`
 * for one that may be unset; `secret()` for one never to be shown). Export it as the default of
 * `routes/_settings.ts`: every entry point reads and checks it at start-up together with the
 * framework's, and a value that makes no sense stops the start. A route, handler, action or
 * middleware reads the values with its context; a page's server components with `useSettings`.
 *
 * @example
 * ```ts
 * // routes/_settings.ts
 * import * as v from "valibot";
 * import { defineSettings, secret } from "shell";
 *
 * export default defineSettings({
 *   PAGE_SIZE: v.optional(v.pipe(v.string(), v.digits("expected rows"), v.toNumber()), "20"),
 *   PAYMENTS_URL: v.pipe(v.string(), v.url("expected a URL")),
 *   PAYMENTS_API_KEY: secret(v.pipe(v.string(), v.minLength(20, "expected a key"))),
 * });
 *
 * // in a handler, an action or a middleware:
 * // const { PAGE_SIZE, PAYMENTS_API_KEY } = settings(ctx);
 * // in a job's run(payload, job) (routes/_jobs.ts): settings(job)
 * // in a page, a layout or a component they render (never an island):
 * // const { PAGE_SIZE } = useSettings(settings);
 * ```
 * @see docs/settings.md - Your product's settings
 */
export function defineSettings<const S extends Readonly<Record<string, SettingSchema>>>(
  schemas: S,
): SettingsDeclaration<S> {
  for (const name of Object.keys(schemas)) {
    if (!NAME.test(name)) {
      throw new TypeError(
        `routes/_settings.ts: ${name} is not an environment variable's name (A-Z, 0-9, _)`,
      );
    }
  }
  const declaration = (from: AnyContext | JobContext): SettingValues<S> => {
    const own = ofJobs.has(from) ? ofJobs.get(from) : scopeOf(from as AnyContext).settings;
    if (own?.declaration !== declaration) {
      throw new Error(
        "This app was not made with these settings: its manifest's routes/_settings.ts is another",
      );
    }
    return own.values as SettingValues<S>;
  };
  return Object.assign(declaration, { schemas });
}

/**
 * A running job's context and the settings of the app running it (`lib/kv/jobs/`): a job answers
 * no request, so no request's scope holds them. An object reference: no payload can name it.
 */
const ofJobs = new WeakMap<object, ProductSettings | undefined>();

/** `job`, a job's context, reading `settings` as the app running it has them. */
export function withJobSettings<T extends object>(job: T, settings?: ProductSettings): T {
  ofJobs.set(job, settings);
  return job;
}

/** An app's settings: the declaration and its values. */
export interface ProductSettings {
  readonly declaration: SettingsDeclaration;
  readonly values: Readonly<Record<string, unknown>>;
  /**
   * When the app has secrets whose values are text: the name of the one a value of an island's
   * props is or holds (`islands/island.ts` refuses it), checked for every value of them.
   */
  readonly secretIn?: (value: unknown) => string | undefined;
}

/**
 * The app's settings: `given` (the entry point's, from the environment, or a test's own, read by
 * their schemas as the environment's text is: `given.ts`), each setting not given as if its
 * variable were unset. Throws
 * `SettingsError` for a value given that its schema refuses and for a required setting not given,
 * and a `TypeError` for a value given that is not declared.
 */
export function productSettings(
  declaration: SettingsDeclaration | undefined,
  given: Readonly<Record<string, unknown>> = {},
): ProductSettings | undefined {
  const schemas: Readonly<Record<string, SettingSchema>> = declaration?.schemas ?? {};
  const unknown = Object.keys(given).filter((name) => !Object.hasOwn(schemas, name));
  if (unknown.length > 0) {
    throw new TypeError(
      `AppOptions.settings: ${unknown.join(", ")} not declared in routes/_settings.ts`,
    );
  }
  if (!declaration) return undefined;
  const problems: string[] = [];
  const held = readGiven(schemas, given, problems);
  const missing = Object.fromEntries(
    Object.entries(schemas).filter(([name]) => !Object.hasOwn(given, name)),
  );
  const values = { ...readVariables(missing, () => undefined, problems), ...held };
  if (problems.length > 0) throw new SettingsError(problems);
  // Each secret as text, and as a URL or a query string percent-encodes it (a key in base64 has
  // '+', '/' and '=': `url.searchParams.set("token", key)` writes none of them as they are).
  const secrets: [name: string, text: string][] = [];
  for (const [name, schema] of Object.entries(schemas)) {
    const value = values[name];
    if (!isSecret(schema) || typeof value !== "string" || value === "") continue;
    const forms = new Set([
      value,
      encodeURIComponent(value),
      new URLSearchParams({ _: value }).toString().slice(2),
    ]);
    for (const form of forms) secrets.push([name, form]);
  }
  const encoder = new TextEncoder();
  const asBytes: Secrets = secrets.map(([name, text]) => [name, byteText(encoder.encode(text))]);
  return {
    declaration,
    values: Object.freeze(values),
    secretIn: secrets.length > 0 ? (value) => secretIn(secrets, asBytes, value) : undefined,
  };
}

/**
 * The secret setting whose value `value` is or holds, as it is or percent-encoded: a text, a URL's
 * or search params' text, a RegExp's pattern (devalue sends its source: `new RegExp(key)` is the
 * key in the page), an object's keys (devalue writes keys without showing them to its reducers; an
 * array's and a typed array's are indexes, never sent: a string each, a short secret of digits
 * among them), an `ArrayBuffer`'s bytes (`asBytes`: each secret's UTF-8, as `byteText`) - devalue
 * shows a typed array or a `DataView` as its whole buffer, which it sends in base64: a key encoded
 * for WebCrypto is the key. A secret of fewer than 8 characters is looked for as a whole text only:
 * as a part of one it would be found in ordinary words.
 */
function secretIn(secrets: Secrets, asBytes: Secrets, value: unknown): string | undefined {
  if (typeof value === "string") return secretInText(secrets, value);
  if (value instanceof URL || value instanceof URLSearchParams) {
    return secretInText(secrets, String(value));
  }
  if (value instanceof RegExp) return secretInText(secrets, value.source);
  if (value instanceof ArrayBuffer) return secretInText(asBytes, byteText(new Uint8Array(value)));
  if (
    typeof value === "object" && value !== null && !Array.isArray(value) &&
    !ArrayBuffer.isView(value)
  ) {
    for (const key of Object.keys(value)) {
      const name = secretInText(secrets, key);
      if (name) return name;
    }
  }
}

/** Secrets' names, each with a text to look for: its value, or a form of it. */
type Secrets = readonly (readonly [name: string, text: string])[];

function secretInText(secrets: Secrets, text: string): string | undefined {
  for (const [name, secret] of secrets) {
    if (text === secret || (secret.length >= 8 && text.includes(secret))) return name;
  }
}

/**
 * Bytes as text, a character a byte (windows-1252 decodes each of the 256 to its own character),
 * so that finding a secret's bytes is the engine's substring search: a mebibyte in a millisecond.
 */
function byteText(bytes: Uint8Array): string {
  return BYTES.decode(bytes);
}

const BYTES = new TextDecoder("windows-1252");
