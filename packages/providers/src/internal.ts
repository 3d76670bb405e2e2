// @lattice/providers/internal: transport helpers the Lattice packages share with each other
// (the AI SDK bridge retries and aborts exactly as the native adapters do). Not part of the
// public API (the umbrella does not re-export them): they may change in any release.
export { abortError } from "./transport/abort-error.js";
export { statusCode } from "./transport/http-status-error.js";
export { type HeaderReader, retryDelay } from "./transport/retry-delay.js";
