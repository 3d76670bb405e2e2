// @lattice/providers/http: the transport under Lattice's own adapters, for providers written
// outside the repository. See "Write your own provider" in the package README.

export {
  ProviderError,
  type ProviderErrorCode,
  type ProviderErrorDetails,
} from "../provider-error.js";
export type { ParsedToolCallInput } from "../transport/parse-tool-input.js";
export { redactSecret } from "../transport/redact-secret.js";
export {
  createHttpTransport,
  type HttpCallOptions,
  type HttpTransport,
  type HttpTransportOptions,
} from "./create-http-transport.js";
export type {
  DecodedModelResponse,
  DecodedStreamEvent,
  DecoderContext,
  ModelResponseCodec,
  ModelStreamDecoder,
  ServerSentEvent,
  StreamDecoderContext,
} from "./model-response-codec.js";
export { parseToolInput } from "./parse-tool-input.js";
