/**
 * @module
 * `deno task start`: builds when the sources changed since the last build, then runs the launcher
 * (`launcher.ts`) from the server's bundle (`load_built.ts`).
 */
import "./node_env.ts";
import { loadBuilt } from "./load_built.ts";

await loadBuilt("launcher");
