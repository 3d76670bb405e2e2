export { estimateRequestTokens } from "./estimate-request-tokens.js";
export {
  createScriptedModelServer,
  type ScriptedModelServer,
  type ScriptedModelServerOptions,
} from "./scripted-model-server.js";
export type {
  RecordedRequest,
  ScriptedBlock,
  ScriptedFault,
  ScriptedHttpError,
  ScriptedReply,
  ScriptedTurn,
} from "./scripted-turn.js";
