/**
 * @module
 * Island props on their way to the browser: `devalue` keeps Date, Map, Set, BigInt, URL, undefined
 * and cycles intact. The result goes into an HTML attribute, which React escapes, so no value can
 * close the element or open a script. Runs on the server and in the browser.
 */
import { parse, stringify } from "devalue";

/**
 * `props` as text for the browser. `refuse`, when given, sees every value: a reason it returns
 * stops the render with it (the server's check that no secret setting goes out).
 */
export function serializeProps(
  island: string,
  props: Record<string, unknown>,
  refuse?: (value: unknown) => string | undefined,
): string {
  let refused: string | undefined;
  try {
    return stringify(
      props,
      refuse && {
        refused(value: unknown) {
          refused = refuse(value);
          if (refused) throw new TypeError(refused);
        },
      },
    );
  } catch (error) {
    if (refused) {
      throw new TypeError(`Island <${island}> got ${refused}: it is never sent to the browser.`);
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
