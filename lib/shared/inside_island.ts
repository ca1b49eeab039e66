/**
 * @module
 * Whether a component renders inside an island's own tree: true below an island's root, where
 * nested islands hydrate as part of their parent and `<Contained>` is a React error boundary, false
 * on the page around (and in an island's static children). Browser-safe.
 */
import { createContext } from "react";

export const InsideIsland = createContext(false);
