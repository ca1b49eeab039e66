/**
 * @module
 * Where the example's headline lives in KV, and what it says before anyone published one.
 */
export const HEADLINE_KEY = ["example", "headline"];
export const FIRST_HEADLINE = "Pages served faster than React can render them";
