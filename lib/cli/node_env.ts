/**
 * @module
 * React picks its development or production build from NODE_ENV when first imported; production
 * (7x faster) is the default wherever nothing says otherwise, Deno Deploy included. Imported first.
 * The framework's production is anything but `development` (docs/settings.md), React's only
 * `production`: under NODE_ENV=staging (or `test`, ...) the app ran in production mode on React's
 * development build, whose server renderer writes a failed Suspense boundary's message and stack
 * into the streamed page. So anything but `development` is made `production`, for React too.
 */
if (Deno.env.get("NODE_ENV") !== "development") Deno.env.set("NODE_ENV", "production");
