/**
 * @module
 * A built copy of the project with a live collection of the tests' own — the framework's tests of
 * collections across processes and in Chromium use it, never the example's board: `cards`
 * (indexed by column, unique by title), a JSON API that creates, moves (read-modify-write: each
 * move counts in `moves`) and deletes them, `GET /cards/events[?column=]` (`changeStream`, one
 * line), and `/cards[?column=]`, a page whose island keeps the view live (`useLiveCollection`).
 * Every response names the worker that answered (`X-Worker`).
 */
import { builtCopy } from "./built_copy.ts";

export interface Card {
  title: string;
  column: string;
  moves: number;
}

/** The indexes, as `assertConsistent` reads them back. */
export const CARD_INDEXES = {
  byColumn: { key: (card: Record<string, unknown>) => card.column as string },
  byTitle: { key: (card: Record<string, unknown>) => card.title as string, unique: true },
};

const FILES: Record<string, string> = {
  "routes/_middleware.ts": `const worker = crypto.randomUUID();
export const handler = async (c, next) => {
  await next();
  c.header("X-Worker", worker);
};
`,
  "routes/_cards/cards.ts": `import * as v from "valibot";
import { collection } from "shell/data";

export const cards = collection("cards", {
  schema: v.object({ title: v.string(), column: v.string(), moves: v.number() }),
  indexes: { byColumn: { key: "column" }, byTitle: { key: "title", unique: true } },
});

/** The view a request asks for: one column, or all the cards. */
export function viewOf(url: URL) {
  const column = url.searchParams.get("column");
  return column === null ? { limit: 1000 } : { index: "byColumn" as const, value: column, limit: 1000 };
}
`,
  "routes/cards/api.ts": `import type { Handlers } from "shell";
import { kvOf } from "shell/data";
import { cards } from "../_cards/cards.ts";

export const handler: Handlers = {
  async POST(req, ctx) {
    const kv = kvOf(ctx);
    const body = await req.json();
    if (body.op === "create") return Response.json(await cards.create(kv, body.card));
    if (body.op === "move") {
      const moved = await cards.update(kv, body.id, (card) => ({
        column: body.column,
        moves: card.moves + 1,
      }));
      return Response.json(moved);
    }
    if (body.op === "delete") return Response.json({ versionstamp: await cards.delete(kv, body.id) });
    return new Response("unknown op", { status: 400 });
  },
};
`,
  "routes/cards/events.ts": `import type { Handlers } from "shell";
import { changeStream } from "shell/data";
import { cards, viewOf } from "../_cards/cards.ts";

export const handler: Handlers = {
  GET: (req, ctx) => changeStream(req, ctx, cards, { ...viewOf(ctx.url), retryMs: 200 }),
};
`,
  "routes/cards/index.tsx": `import Cards from "@/islands/Cards.tsx";
import type { Handlers, PageProps } from "shell";
import { kvOf } from "shell/data";
import type { Snapshot } from "shell/runtime";
import { cards, viewOf } from "../_cards/cards.ts";

type Data = { snapshot: Snapshot<{ title: string; column: string; moves: number }>; events: string };

export const handler: Handlers<Data> = {
  async GET(_req, ctx) {
    const events = "/cards/events" + ctx.url.search;
    return ctx.render({ snapshot: await cards.snapshot(kvOf(ctx), viewOf(ctx.url)), events });
  },
};

export default function Page({ data }: PageProps<Data>) {
  return <Cards snapshot={data.snapshot} events={data.events} />;
}
`,
  "islands/Cards.tsx": `import { type Snapshot, useLiveCollection } from "shell/runtime";

type Card = { title: string; column: string; moves: number };

export default function Cards({ snapshot, events }: { snapshot: Snapshot<Card>; events: string }) {
  const { items, status } = useLiveCollection<Card>(events, snapshot);
  return (
    <>
      <p id="status">{status}</p>
      <ul id="cards">
        {items.map((card) => (
          <li key={card.id} data-id={card.id}>{card.value.title}:{card.value.column}:{card.value.moves}</li>
        ))}
      </ul>
    </>
  );
}
`,
};

/** The built copy (shared by the test files that ask for it). */
export function liveProject(): Promise<string> {
  return builtCopy("live-collection", FILES);
}

/** Calls the fixture's JSON API. */
export async function cardsApi<T>(
  origin: string,
  body: Record<string, unknown>,
  client?: Deno.HttpClient,
): Promise<{ status: number; worker: string | null; body: T }> {
  const res = await fetch(origin + "/cards/api", {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "Content-Type": "application/json" },
    client,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${res.status}: ${text}`);
  return { status: res.status, worker: res.headers.get("x-worker"), body: JSON.parse(text) };
}
