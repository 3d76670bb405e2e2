/** Who the bridge talks to, for error messages and responses. */
export interface BridgeContext {
  /** The model in messages, for example `AI SDK model "gpt-4o" (openai.chat)`. */
  readonly label: string;
  /** The pseudo-URL `ai-sdk:<provider>`, used when an error carries no request URL. */
  readonly endpoint: string;
  /** The AI SDK model's id, reported as the response's model unless the API names another. */
  readonly modelId: string;
}
