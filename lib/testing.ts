/**
 * @module
 * The test kit for an app's own tests (`import … from "shell/testing"`): a client that talks to the
 * app as a browser does — in-process or over HTTP, with a cookie jar — submits a page's forms as a
 * browser without JavaScript would and calls server actions as an island does; the app's log lines
 * per request; and a local stand-in for Sentry that reads what the real SDK sends. See
 * docs/testing.md. Test-only: nothing here belongs in an app's modules.
 */
export {
  type CallOptions,
  type ClientRequestInit,
  type FieldValue,
  type InProcess,
  type SubmitOptions,
  type Target,
  TestClient,
  type TestClientOptions,
} from "./testing/client.ts";
export { captureLogs, type LogLine, type Logs } from "./testing/logs.ts";
export {
  isErrorEvent,
  isTransaction,
  type ReceivedItem,
  type ReceivedRequest,
  type ReceiverOptions,
  type SentryReceiver,
  startSentryReceiver,
} from "./testing/sentry_receiver.ts";
