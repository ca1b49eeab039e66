/**
 * @module
 * A background job's try as a span (`Telemetry.job`): named after the job, with its name, attempt
 * and key, in the trace of the code that enqueued it - whose context its message carries, as a
 * `traceparent` header would: a request's, or for a cron job the span Deno makes for the cron's
 * firing (`deno.cron`); enqueued outside any span, in a trace of its own. A failure captured while
 * it runs marks it (`otelTelemetry`'s `captureFailure`), and its Sentry event and JSON line carry
 * its ids, as a request's failure carries the request's.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import type { JobRun } from "../server/telemetry.ts";
import { tracer } from "./request_span.ts";

const JOB_ATTRIBUTE = "app.job";
const JOB_ATTEMPT_ATTRIBUTE = "app.job.attempt";
const JOB_KEY_ATTRIBUTE = "app.job.key";

/** The active trace context as headers (`traceparent`), for the job's message; none outside one. */
export function jobContext(): Record<string, string> | undefined {
  if (!trace.getActiveSpan()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** Runs the try under its span, ended when it settles. */
export async function jobSpan(run: JobRun, work: () => Promise<void>): Promise<void> {
  const parent = run.carried ? propagation.extract(ROOT_CONTEXT, run.carried) : ROOT_CONTEXT;
  const span = tracer.startSpan(run.name, {
    kind: SpanKind.CONSUMER,
    attributes: {
      [JOB_ATTRIBUTE]: run.name,
      [JOB_ATTEMPT_ATTRIBUTE]: run.attempt,
      ...run.key === undefined ? {} : { [JOB_KEY_ATTRIBUTE]: run.key },
    },
  }, parent);
  try {
    await context.with(trace.setSpan(parent, span), work);
  } finally {
    span.end();
  }
}
