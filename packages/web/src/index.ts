/**
 * `@lattice/web`: a Lattice agent in a web page. Its runs as the AI SDK's UI message stream
 * (the protocol of `useChat` in `@ai-sdk/react`, Vue, Svelte and Angular), with tool approvals,
 * batch plans and aborts, and a chat route in one line.
 *
 * @packageDocumentation
 */
export { type ApprovalResponses, approvalResponses } from "./approval-responses.js";
export {
  type ChatEndpoint,
  type ChatEndpointOptions,
  type ChatRequestBody,
  chatEndpoint,
  DEFAULT_MAX_CHAT_BODY_BYTES,
} from "./chat-endpoint.js";
export { ChatRequestError, type ChatRequestErrorCode } from "./chat-request-error.js";
export { fromUIMessages } from "./from-ui-messages.js";
export type {
  LatticeBatchData,
  LatticeDataParts,
  LatticeMessageMetadata,
  LatticeRefusalData,
  LatticeToolCallData,
  LatticeUIMessage,
  LatticeUIMessageChunk,
} from "./lattice-ui-message.js";
export { toUIMessages, uiMessagesOfSession } from "./session-ui-messages.js";
export { toUIMessageStream, type UIMessageStreamOptions } from "./to-ui-message-stream.js";
export { type TraceRelay, traceRelay } from "./trace-relay.js";
export {
  type NodeResponseLike,
  pipeUIMessageStreamToResponse,
  toUIMessageStreamResponse,
  UI_MESSAGE_STREAM_HEADERS,
  type UIMessageStreamResponseInit,
} from "./ui-message-stream-response.js";
