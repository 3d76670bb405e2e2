// @lattice/providers/internal: transport and wire helpers the Lattice packages share with each
// other (the AI SDK bridge retries and aborts exactly as the native adapters do, can recognise a
// context overflow as they do, and can adapt an output schema as the Anthropic adapter does). Not part of the public API (the umbrella
// does not re-export them): they may change in any release.
export { toAnthropicOutputSchema } from "./anthropic/to-anthropic-output-schema.js";
export { abortError } from "./transport/abort-error.js";
export { MAX_RESPONSE_EVENT_SIZE } from "./transport/call-model.js";
export { type ContextOverflow, parseContextOverflow } from "./transport/context-overflow.js";
export { statusCode } from "./transport/http-status-error.js";
export {
  collectSecrets,
  isSensitiveHeader,
  redactError,
  redactSecrets,
  safeEndpoint,
} from "./transport/redact-secret.js";
export { type HeaderReader, retryDelay } from "./transport/retry-delay.js";
