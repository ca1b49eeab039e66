/**
 * @module
 * React picks its development or production build from NODE_ENV when first imported; production
 * (7× faster) is the default wherever nothing says otherwise, Deno Deploy included. Imported first.
 */
if (!Deno.env.get("NODE_ENV")) Deno.env.set("NODE_ENV", "production");
