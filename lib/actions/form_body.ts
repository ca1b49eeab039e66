/**
 * @module
 * An action call's form body, read within the fields cap (`limits.ts`) as it arrives: the fields
 * are counted in the bytes themselves - `name=value` pairs between `&`s, or multipart delimiters -
 * and a body with more is refused at the first byte past the cap, before anything is parsed.
 * `Request.formData()` parses a whole body first: a mebibyte of `a&a&...` was half a million
 * fields, a third of a second of the server's one thread, before any count could refuse it. Within
 * the cap, the bytes read are handed to `formData()` as they are, under the type they were counted
 * by.
 *
 * The type is read as Deno's form parser reads it (WHATWG's MIME type parser: the first `boundary`
 * parameter, a quoted one unescaped), and it is that type the parser is then given, whatever else
 * the client's header said: a boundary read another way (the header's last, a quoted one cut at
 * its escape), or a header the parser reads as another type than it begins with, had bodies of
 * 20,000 parts parsed whole before anything counted them.
 */
// @ts-types="@types/whatwg-mimetype"
import { MIMEType } from "whatwg-mimetype";
import { PayloadRejected } from "./rejected.ts";

/**
 * The form `req` carries, or a `PayloadRejected` past `maxFields` fields (the rest of the body is
 * then never read). A body that is not a form fails with a `TypeError`, unread.
 */
export async function readForm(req: Request, maxFields: number): Promise<FormData> {
  if (!req.body) return await req.formData();
  const form = formType(req.headers.get("content-type") ?? "");
  if (!form) throw new TypeError("the body is not a form (its Content-Type)");
  const counter = form.counter();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  const reader = req.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (counter(value) > maxFields) {
        throw new PayloadRejected(`more than ${maxFields} form fields`, "fields");
      }
      chunks.push(value as Uint8Array<ArrayBuffer>);
    }
  } catch (error) {
    reader.cancel().catch(() => {}); // Deno discards the rest: the client is not left stuck
    throw error;
  }
  return await new Response(new Blob(chunks), { headers: { "Content-Type": form.type } })
    .formData();
}

/** A form's type as the parser will be given it, and the counter of its fields. */
interface FormType {
  type: string;
  /** Counts fields chunk by chunk: the fields so far, after each chunk. */
  counter(): (chunk: Uint8Array) => number;
}

/** The form a `Content-Type` announces; none for anything else (no boundary, not one type). */
function formType(header: string): FormType | undefined {
  const mime = MIMEType.parse(header);
  if (mime?.essence === "application/x-www-form-urlencoded") {
    return { type: mime.essence, counter: pairCounter };
  }
  const boundary = mime?.essence === "multipart/form-data" && mime.parameters.get("boundary");
  if (!boundary) return undefined;
  return { type: mime.toString(), counter: () => partCounter(boundary) };
}

const AMPERSAND = 0x26;

/** `a=1&b=2`: the non-empty runs between `&`s, as `URLSearchParams` parses them. */
function pairCounter(): (chunk: Uint8Array) => number {
  let count = 0;
  let inPair = false;
  return (chunk) => {
    for (let at = 0; at < chunk.length;) {
      const amp = chunk.indexOf(AMPERSAND, at);
      const end = amp < 0 ? chunk.length : amp;
      if (end > at && !inPair) count++;
      if (end > at) inPair = true;
      if (amp < 0) break;
      inPair = false;
      at = amp + 1;
    }
    return count;
  };
}

/**
 * Multipart: the occurrences of `--boundary`, across chunk edges (Knuth-Morris-Pratt, so one
 * pass whatever the bytes). Every part follows one; the last one closes the body. Occurrences
 * inside a part's content (a client can put them there) only count against that client.
 */
function partCounter(boundary: string): (chunk: Uint8Array) => number {
  const needle = new TextEncoder().encode(`--${boundary}`);
  const fallback = new Int32Array(needle.length);
  for (let i = 1, k = 0; i < needle.length; i++) {
    while (k > 0 && needle[i] !== needle[k]) k = fallback[k - 1];
    if (needle[i] === needle[k]) k++;
    fallback[i] = k;
  }
  let matched = 0;
  let delimiters = 0;
  return (chunk) => {
    for (let at = 0; at < chunk.length; at++) {
      // Outside a match, on to the next `-` natively: a file's bytes are mostly skipped.
      if (matched === 0 && (at = chunk.indexOf(needle[0], at)) < 0) break;
      const byte = chunk[at];
      while (matched > 0 && byte !== needle[matched]) matched = fallback[matched - 1];
      if (byte === needle[matched]) matched++;
      if (matched === needle.length) {
        delimiters++;
        matched = fallback[matched - 1];
      }
    }
    return Math.max(0, delimiters - 1);
  };
}
