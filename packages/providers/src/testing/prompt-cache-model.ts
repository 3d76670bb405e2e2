import { createHash } from "node:crypto";
import type { CacheUsage } from "./resolve-reply.js";

/**
 * The scripted server's model of Anthropic prompt caching: simple and deterministic, for tests
 * and demos, not a copy of the API's rules.
 *
 * A request is read as a sequence of segments in the API's cache order: each tool, the system
 * prompt (each of its blocks), then each block of each message (a string content is one
 * block), every segment as its JSON text without `cache_control`. A segment carrying
 * `cache_control` is a breakpoint. A request without breakpoints is not measured.
 *
 * - The prefix up to each breakpoint is remembered (by hash, per model) after the request.
 * - `cacheReadInputTokens`: the longest remembered prefix that ends at or before the request's
 *   last breakpoint, in tokens.
 * - `cacheCreationInputTokens`: the rest of the prefix up to the last breakpoint.
 * - Tokens are characters / 4, rounded up. There is no minimum length and no expiry.
 */
export class PromptCacheModel {
  readonly #remembered = new Set<string>();

  /**
   * Measures a Messages API request body and remembers its breakpoints' prefixes.
   *
   * @param body - The parsed request body.
   * @returns The cache counts, or `undefined` when the request has no breakpoint.
   */
  measure(body: unknown): CacheUsage | undefined {
    const segments = segmentsOf(body as Record<string, unknown>);
    let last = -1;
    for (let index = 0; index < segments.length; index++) {
      if (segments[index]!.breakpoint) last = index;
    }
    if (last < 0) return undefined;
    const model = String((body as { model?: unknown }).model);
    const hash = createHash("sha256").update(model);
    let characters = 0;
    let readCharacters = 0;
    const breakpoints: string[] = [];
    for (let index = 0; index <= last; index++) {
      const segment = segments[index]!;
      hash.update(`\u0000${segment.text}`);
      characters += segment.text.length;
      const prefix = hash.copy().digest("hex");
      if (this.#remembered.has(prefix)) readCharacters = characters;
      if (segment.breakpoint) breakpoints.push(prefix);
    }
    for (const prefix of breakpoints) this.#remembered.add(prefix);
    const read = Math.ceil(readCharacters / 4);
    return {
      cacheReadInputTokens: read,
      cacheCreationInputTokens: Math.ceil(characters / 4) - read,
    };
  }
}

/** One cacheable piece of a request. */
interface Segment {
  readonly text: string;
  readonly breakpoint: boolean;
}

function segmentsOf(request: Record<string, unknown>): Segment[] {
  const segments: Segment[] = [];
  const add = (prefix: string, value: unknown): void => {
    const record = (value ?? {}) as Record<string, unknown>;
    const { cache_control: cacheControl, ...rest } = record;
    segments.push({
      text: `${prefix}${JSON.stringify(rest)}`,
      breakpoint: cacheControl !== undefined && cacheControl !== null,
    });
  };
  if (Array.isArray(request.tools)) for (const tool of request.tools) add("tool:", tool);
  const system = request.system;
  if (typeof system === "string") add("system:", { type: "text", text: system });
  else if (Array.isArray(system)) for (const block of system) add("system:", block);
  if (Array.isArray(request.messages)) {
    for (const message of request.messages as Record<string, unknown>[]) {
      const role = String(message?.role);
      const content = message?.content;
      if (typeof content === "string") add(`${role}:`, { type: "text", text: content });
      else if (Array.isArray(content)) for (const block of content) add(`${role}:`, block);
    }
  }
  return segments;
}
