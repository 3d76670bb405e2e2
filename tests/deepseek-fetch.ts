import type { ScriptedModelServer } from "agent-lattice/testing";

/** One request the seed's agent sent, as it left the SDK (before being routed to loopback). */
export interface SentRequest {
  readonly url: string;
  readonly headers: Headers;
}

/**
 * Routes the real endpoints the product page names (DeepSeek's `/anthropic` and Anthropic's
 * API) to the scripted server on 127.0.0.1, so the page's code runs word for word offline.
 * Records each URL and headers as the SDK built them. Returns a function that restores fetch.
 */
export function routeModelApisTo(server: ScriptedModelServer, sent: SentRequest[]): () => void {
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    sent.push({
      url,
      headers: new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)),
    });
    const routed = url
      .replace("https://api.deepseek.com/anthropic", server.anthropicBaseURL)
      .replace("https://api.anthropic.com", server.anthropicBaseURL);
    if (!routed.startsWith("http://127.0.0.1")) throw new Error(`test tried to reach ${url}`);
    return original(routed, init);
  }) as typeof fetch;
  return () => {
    globalThis.fetch = original;
  };
}
