/**
 * @module
 * `BuildProblem`: a mistake in the project's files that stops the build (two routes on one URL, a
 * non-async export of a `"use server"` module, a misnamed island, an import that resolves to
 * nothing, a syntax error in an island). Its message names the file - and the line, where there is
 * one - and says what is wrong, a line per mistake; the entry points print each as one line,
 * without a stack, which would only point into the build (or into esbuild's internals).
 */
import type * as esbuild from "esbuild";

export class BuildProblem extends Error {
  override name = "BuildProblem";
}

/** esbuild's `BuildFailure` (an `Error` with the messages of the build). */
export function isBuildFailure(error: unknown): error is esbuild.BuildFailure {
  return error instanceof Error && Array.isArray((error as Partial<esbuild.BuildFailure>).errors);
}

/** esbuild's errors as a problem: `islands/Counter.tsx:3:24: Could not resolve "./nope.ts"`. */
export function problemOf(errors: esbuild.Message[]): BuildProblem {
  return new BuildProblem(errors.map(lineOf).join("\n"));
}

/** One error, `file:line:column: text` (esbuild's columns count from 0, editors' from 1). */
export function lineOf({ text, location }: esbuild.Message): string {
  if (!location) return text;
  return `${location.file}:${location.line}:${location.column + 1}: ${text}`;
}
