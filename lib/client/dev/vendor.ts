/**
 * @module
 * Dev only: React, React DOM and the refresh runtime as one module at a fixed URL
 * (`/_app/vendor.js`), built once per `deno task dev` session. The boot runtime and every island
 * reach React through shims that import this URL (`build/dev/vendor.ts`), so an island chunk
 * rebuilt under a new name and imported again still shares the page's one React.
 *
 * Order matters: the refresh runtime hooks into the page before React DOM evaluates.
 */
import "./refresh_setup.ts";
import react from "react";
import reactJsxRuntime from "react/jsx-runtime";
import reactJsxDevRuntime from "react/jsx-dev-runtime";
import reactDom from "react-dom";
import reactDomClient from "react-dom/client";

export const modules: Record<string, unknown> = {
  "react": react,
  "react/jsx-runtime": reactJsxRuntime,
  "react/jsx-dev-runtime": reactJsxDevRuntime,
  "react-dom": reactDom,
  "react-dom/client": reactDomClient,
};
