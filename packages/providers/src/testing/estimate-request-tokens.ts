/**
 * The scripted model server's estimate of a request's input tokens: a quarter of the body's
 * length in characters, rounded up, at least 1. The whole prompt counts, cached part included;
 * the server reports it as `input_tokens` from `/v1/messages/count_tokens`, compares it with its
 * `contextWindow`, and (less any cache reads and writes) reports it as a reply's input tokens.
 *
 * Tests use it to know what the server will say about a request: pass the recorded body
 * (`server.requests[i].body`) or the JSON text sent. A parsed body is serialised with
 * `JSON.stringify`, which gives back the text the adapters sent (they serialise the same way).
 *
 * @param body - The request body: its JSON text, or the value it parses to.
 * @returns The estimate in tokens.
 */
export function estimateRequestTokens(body: unknown): number {
  const text = typeof body === "string" ? body : (JSON.stringify(body) ?? "");
  return Math.max(1, Math.ceil(text.length / 4));
}
