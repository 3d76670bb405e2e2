// @lattice/providers/internal: transport helpers the Lattice packages share with each other
// (the AI SDK bridge retries and aborts exactly as the native adapters do). Not part of the
// public API (the umbrella does not re-export them): they may change in any release.
export { abortError } from "./transport/abort-error.js";
export { MAX_RESPONSE_EVENT_SIZE } from "./transport/call-model.js";
export { statusCode } from "./transport/http-status-error.js";
export {
  collectSecrets,
  isSensitiveHeader,
  redactError,
  redactSecrets,
  safeEndpoint,
} from "./transport/redact-secret.js";
export { type HeaderReader, retryDelay } from "./transport/retry-delay.js";
