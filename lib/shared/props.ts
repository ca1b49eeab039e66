/**
 * @module
 * Island props on their way to the browser: `devalue` keeps Date, Map, Set, BigInt, URL, undefined
 * and cycles intact. The result goes into an HTML attribute, which React escapes, so no value can
 * close the element or open a script. Runs on the server and in the browser.
 */
import { parse, stringify } from "devalue";

/**
 * `props` as text for the browser. `secretIn`, when given, sees every value: a secret setting's
 * name it returns stops the render, naming the setting (never the value).
 */
export function serializeProps(
  island: string,
  props: Record<string, unknown>,
  secretIn?: (value: unknown) => string | undefined,
): string {
  let secret: string | undefined;
  try {
    return stringify(
      props,
      secretIn && {
        secret(value: unknown) {
          secret = secretIn(value);
          if (secret) throw new TypeError(secret);
        },
      },
    );
  } catch (error) {
    if (secret) {
      throw new TypeError(
        `Island <${island}> got a prop that holds the secret setting ${secret}'s value: ` +
          `it is never sent to the browser.`,
      );
    }
    const path = (error as { path?: string }).path ?? "";
    const reason = error instanceof Error ? error.message : String(error);
    throw new TypeError(
      `Island <${island}> got a prop that cannot be sent to the browser: props${path} (${reason}). ` +
        `Pass plain data (functions and class instances stay on the server; JSX only as children).`,
    );
  }
}

export function deserializeProps(text: string): Record<string, unknown> {
  return parse(text);
}
