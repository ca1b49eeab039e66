/**
 * @module
 * `BuildProblem`: a mistake in the project's files that stops the build (two routes on one URL, a
 * non-async export of a `"use server"` module, a misnamed island). Its message names the file and
 * says what to do; the entry points print it as one line, without a stack, which would only point
 * into the build.
 */
export class BuildProblem extends Error {
  override name = "BuildProblem";
}
