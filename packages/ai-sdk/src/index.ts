export { type AiSdkLanguageModel, type FromAiSdkOptions, fromAiSdk } from "./from-ai-sdk.js";
export type { AiSdkProviderMetadata } from "./provider-metadata.js";
